-- +goose Up
-- Who handled each call and when it ended: an agent may edit a lead within a while after their
-- own call with it (agentLeadEditMode during-call). Rows recorded before this have neither.
ALTER TABLE lead_call_results
    ADD COLUMN user_id  bigint,
    ADD COLUMN ended_at timestamptz;
CREATE INDEX lead_call_results_lead_user ON lead_call_results (lead_id, user_id, ended_at);

-- +goose Down
DROP INDEX lead_call_results_lead_user;
ALTER TABLE lead_call_results DROP COLUMN user_id, DROP COLUMN ended_at;
