-- What the workers need from the request for each sliver's VM (its NICs
-- on link networks with their addresses, its install and execute
-- services), as JSON of model::plan::NodePlan, written at Allocate so the
-- workers never read the request text again. NULL on slivers of earlier
-- releases: the worker then derives the plan from the stored request.
ALTER TABLE slivers ADD COLUMN plan TEXT;
