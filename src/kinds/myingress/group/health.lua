-- MyIngressGroup: a shared load balancer that AWS reports as failed is Degraded; a group with no
-- members (no MyIngress names it) has no load balancer, which only a person changes: Degraded too,
-- with the message saying so. Members refused (Conflict, NotAdmitted) are their own objects' health.
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
  local members = 0
  if status.members ~= nil then
    members = #status.members
  end
  return "Shared load balancer " .. text(status.dnsName) .. " is active, " .. members .. " member(s)"
end
