-- Queue (a test kind): a queue is usable the moment it exists, so nothing fails beyond what Synced
-- reports (Terminal, Conflict); the healthy message names the queue and its visibility timeout.
function kind.failure(obj, ready, synced)
  return nil
end

function kind.healthyMessage(obj)
  local status = obj.status or {}
  local spec = obj.spec or {}
  return "SQS queue " .. text(status.url) .. " is in sync (visibility timeout " .. text(spec.visibilityTimeoutSeconds) .. " s)"
end
