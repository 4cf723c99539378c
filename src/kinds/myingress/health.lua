-- MyIngress: a load balancer that AWS reports as failed is Degraded, and so
-- is one forwarding to a Service (or Service port) that does not exist, or
-- with a listener host no ACM certificate covers: the load balancer runs, but
-- only a person can make that backend or listener work.
function kind.failure(obj, ready, synced)
  local status = obj.status or {}
  if status.state == "failed" or (ready ~= nil and ready.status == "False" and ready.reason == "Failed") then
    local message = "the load balancer failed"
    if ready ~= nil and ready.message ~= nil and ready.message ~= "" then
      message = ready.message
    end
    return { status = "Degraded", message = "AWS reports the load balancer as failed: " .. message }
  end
  local metadata = obj.metadata or {}
  if ready ~= nil and ready.status == "False" and contains(actionRequiredReasons, ready.reason)
    and current(ready, metadata.generation) then
    return { status = "Degraded", message = describe(ready) }
  end
  return nil
end

function kind.healthyMessage(obj)
  local status = obj.status or {}
  return "Load balancer " .. text(status.dnsName) .. " is active"
end
