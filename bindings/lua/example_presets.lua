-- luajit example_presets.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

for _, name in ipairs(cupel.preset_names()) do
  local json = cupel.preset(name):to_json()
  -- A peek at the text with patterns (decode it with a JSON library for more).
  local scorers = {}
  for scorer, weight in json:gmatch('"type": "(%w+)",%s*"weight": ([%d.]+)') do
    scorers[#scorers + 1] = ("%s %g"):format(scorer, tonumber(weight))
  end
  print(("%-12s %-36s %-9s %s"):format(name, table.concat(scorers, ", "), json:match('"slicerType": "(%w+)"'),
    json:match('"placerType": "(%w+)"')))
end

-- Names are matched case-insensitively; an unknown one lists the presets.
print(cupel.preset("agentloop"):to_json():match('"sessionSlack": ([%d.]+)'))
print(select(2, pcall(cupel.preset, "Summarize")))
