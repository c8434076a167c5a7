-- luajit example_policy.lua, with the rock installed and CUPEL_LIB=/path/to/libcupel.so
local cupel = require("cupel")

-- A policy kept in a settings file (the .NET Cupel format, and libcupel's extensions).
local pipeline = cupel.pipeline_from_json([[
{
  "name": "support",
  "scorers": [
    { "type": "recency", "weight": 2 },
    { "type": "kind", "weight": 1, "kindWeights": { "SystemPrompt": 1.0, "Message": 0.5, "ToolOutput": 0.2 } }
  ],
  "slicerType": "knapsack",
  "knapsackBucketSize": 10,
  "placerType": "chronological",
  "tokenizer": "cl100k_base"
}]])
local budget = cupel.budget_from_json('{ "maxTokens": 8000, "targetTokens": 6000, "outputReserve": 1000 }')

-- Written back with every setting, keys in alphabetical order.
print(pipeline:to_json())
print(budget:to_json())

-- A bad document names the JSON path and the rule.
local _, err = pcall(cupel.pipeline_from_json, '{ "scorers": [{ "type": "recency", "weight": -1 }] }')
print(err)
_, err = pcall(cupel.pipeline_from_json, '{ "scorers": [{ "type": "recency", "weight": 1 }], "slicerType": "greedy",\n'
  .. '  "knapsackBucketSize": 10 }')
print(err)
