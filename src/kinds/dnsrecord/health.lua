-- DNSRecord: nothing can fail beyond what Synced reports (Terminal, Conflict);
-- WaitingForReference, Pending, Propagating and Throttled are progress.
function kind.failure(obj, ready, synced)
  return nil
end

function kind.healthyMessage(obj)
  local status = obj.status or {}
  local spec = obj.spec or {}
  return "Route 53 record " .. text(status.fqdn) .. " " .. text(spec.type) .. " is in sync"
end
