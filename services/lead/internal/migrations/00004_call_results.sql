-- +goose Up
-- What finished calls did to each lead (internal/callresult): the calls counted so far, and the
-- end of the latest call applied, so that a call reported late cannot undo a later one.
ALTER TABLE leads
    ADD COLUMN attempts           int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    ADD COLUMN last_call_ended_at timestamptz;

-- One row per call.finished event handled, kept so that a redelivered event (the same eventId,
-- or another event about the same call) changes nothing. Events about a lead that does not exist,
-- or that belongs to another order, are recorded as skipped with the reason.
CREATE TABLE lead_call_results (
    event_id      text        PRIMARY KEY,
    call_id       bigint      NOT NULL,
    lead_id       bigint      NOT NULL,
    order_id      bigint      NOT NULL,
    outcome       text        NOT NULL CHECK (outcome IN ('applied', 'skipped')),
    reason        text,
    processed_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT lead_call_results_call_id_key UNIQUE (call_id)
);

-- +goose Down
DROP TABLE lead_call_results;
ALTER TABLE leads DROP COLUMN last_call_ended_at, DROP COLUMN attempts;
