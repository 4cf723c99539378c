-- ManagedDB: RDS failure states are Degraded, a stopped instance is
-- Suspended, and a failed scheduled snapshot is Degraded (the instance works,
-- but backups need attention) until a later snapshot succeeds.
function kind.failure(obj, ready, synced)
  local status = obj.status or {}
  local state = status.dbInstanceStatus
  if state ~= nil and contains(rdsFailedStates, state) then
    return { status = "Degraded", message = "RDS reports the DB instance as " .. state }
  end
  if state == "stopped" then
    return { status = "Suspended", message = "RDS reports the DB instance as stopped" }
  end
  if synced ~= nil and synced.status == "False" and synced.reason == "SnapshotFailed" then
    return { status = "Degraded", message = text(synced.message) }
  end
  return nil
end

function kind.healthyMessage(obj)
  local status = obj.status or {}
  local message = "DB instance " .. text(status.identifier) .. " is available"
  if status.endpoint ~= nil and status.endpoint.address ~= nil then
    message = message .. " at " .. status.endpoint.address .. ":" .. text(status.endpoint.port)
  end
  return message
end
