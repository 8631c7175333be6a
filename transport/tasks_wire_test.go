package transport_test

import "regexp"

var (
	taskIDs   = regexp.MustCompile(`task-[0-9a-f]{32}`)
	taskTimes = regexp.MustCompile(`"(createdAt|lastUpdatedAt)": "[0-9T:.Z-]+"`)
	taskTTLs  = regexp.MustCompile(`"(ttl|ttlMs)": [0-9]+`)
)

// maskTask makes a wire answer about a task stable: the last task id it
// names becomes *task (a request's $TASK) and reads $TASK; times read
// $TIME; a kept task's TTL (the replay TTL plus how long it ran) reads
// $TTL.
func maskTask(out string, task *string) string {
	if ids := taskIDs.FindAllString(out, -1); len(ids) > 0 {
		*task = ids[len(ids)-1]
	}
	out = taskIDs.ReplaceAllString(out, "$$TASK")
	out = taskTimes.ReplaceAllString(out, `"$1": "$$TIME"`)
	return taskTTLs.ReplaceAllString(out, `"$1": $$TTL`)
}
