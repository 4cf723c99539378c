-- The part every Skylift kind shares. The generated health.lua is: the
-- constants (`conditionTypes`, `reasons`, an empty table `kind`, and
-- kind-specific lists, all rendered from the operator's TypeScript), this
-- file, the kind's own file (which fills in kind.failure and
-- kind.healthyMessage), and `return assess(obj)`. Lua 5.1 as gopher-lua runs
-- argocd-cm scripts: base, table and package only, so no string or math
-- library.

-- tostring that turns nil into "" (concatenating nil is an error).
-- True when `value` is one of `list`.
local function contains(list, value)
  for _, v in ipairs(list) do
    if v == value then
      return true
    end
  end
  return false
end

local function text(value)
  if value == nil then
    return ""
  end
  return tostring(value)
end

local function result(status, message)
  return { status = status, message = message }
end

local function findCondition(conditions, conditionType)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

-- True when the operator wrote this condition for the current spec.
local function current(c, generation)
  return c ~= nil and c.observedGeneration == generation
end

-- "Reason: message", or just the reason when there is no message.
local function describe(c)
  if c.message == nil or c.message == "" then
    return text(c.reason)
  end
  return text(c.reason) .. ": " .. c.message
end

-- Synced=False that no retry fixes: the spec must change (Terminal) or the
-- AWS resource belongs to someone else (Conflict).
local function stuck(c, generation)
  return c ~= nil and c.status == "False" and current(c, generation)
    and (c.reason == reasons.terminal or c.reason == reasons.conflict)
end

local function assess(obj)
  local metadata = obj.metadata or {}
  local generation = metadata.generation
  local status = obj.status
  local conditions = nil
  if status ~= nil then
    conditions = status.conditions
  end
  local ready = findCondition(conditions, conditionTypes.ready)
  local synced = findCondition(conditions, conditionTypes.synced)

  if metadata.deletionTimestamp ~= nil then
    if stuck(synced, generation) then
      return result("Degraded", "Deletion is blocked: " .. text(synced.message))
    end
    local deleting = "Deleting"
    if ready ~= nil and ready.reason == reasons.deleting then
      deleting = describe(ready)
    end
    return result("Progressing", deleting .. "; Skylift removes its finalizer once AWS confirms the resource is gone")
  end
  if conditions == nil or #conditions == 0 then
    return result("Progressing", "Waiting for Skylift to reconcile " .. text(obj.kind) .. " " .. text(metadata.name))
  end
  if status.observedGeneration ~= generation then
    return result("Progressing", "Waiting for Skylift to observe generation " .. text(generation))
  end
  if stuck(synced, generation) then
    return result("Degraded", text(synced.message))
  end
  local particular = kind.failure(obj, ready, synced)
  if particular ~= nil then
    return particular
  end
  if synced ~= nil and synced.status == "False" then
    -- Retried with backoff, or waiting (e.g. WaitingForReference): not stuck.
    return result("Progressing", describe(synced))
  end
  if ready ~= nil and ready.status == "False" and ready.reason == reasons.notFound and current(ready, generation) then
    return result("Degraded", describe(ready))
  end
  if ready ~= nil and synced ~= nil and ready.status == "True" and synced.status == "True"
    and current(ready, generation) and current(synced, generation) then
    return result("Healthy", kind.healthyMessage(obj))
  end
  if ready ~= nil and ready.status == "False" and current(ready, generation) then
    return result("Progressing", describe(ready))
  end
  return result("Progressing", "Waiting for Skylift to report readiness for generation " .. text(generation))
end
