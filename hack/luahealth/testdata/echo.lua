-- The object arrives as Lua tables, JSON numbers as Lua numbers.
return {
  status = "Healthy",
  message = type(obj.metadata.generation) .. " " .. obj.metadata.generation .. ", " .. #obj.list .. " items",
}
