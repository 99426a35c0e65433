-- +goose Up
-- A lead without a planned call is due at once only if it was never called: after a call, "no
-- next call" (attempts used up, an answered lead waiting for the agent's disposition) means do not
-- dial, and such leads leave the queue's index, so a lease never reads them.
DROP INDEX leads_dial_queue;
CREATE INDEX leads_dial_queue ON leads (order_id, priority DESC, planning_call_at ASC NULLS FIRST, id)
    WHERE lead_dialable(status_id) AND (planning_call_at IS NOT NULL OR last_call_ended_at IS NULL);

-- +goose Down
DROP INDEX leads_dial_queue;
CREATE INDEX leads_dial_queue ON leads (order_id, priority DESC, planning_call_at ASC NULLS FIRST, id)
    WHERE lead_dialable(status_id);
