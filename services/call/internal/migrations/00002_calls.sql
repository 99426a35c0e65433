-- +goose Up
-- One row per call the telephony platform reported. platform_call_id is the platform's id: an
-- event delivered twice finds its call already stored and adds nothing.
CREATE TABLE calls (
    id                         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    platform_call_id           text        NOT NULL,
    lead_id                    bigint      NOT NULL CHECK (lead_id > 0),
    order_id                   bigint      NOT NULL CHECK (order_id > 0),
    user_id                    bigint      NOT NULL CHECK (user_id > 0),
    sip_endpoint_id            bigint      NOT NULL CHECK (sip_endpoint_id > 0),
    status_id                  integer     NOT NULL REFERENCES call_statuses (id),
    direction                  text        NOT NULL CHECK (direction IN ('incoming', 'outgoing')),
    finish_initiator           text        CHECK (finish_initiator IN ('agent', 'client', 'system')),
    client_phone               text        NOT NULL CHECK (client_phone ~ '^[1-9][0-9]{6,14}$'),
    is_predictive              boolean     NOT NULL,
    has_records                boolean     NOT NULL,
    started_at                 timestamptz NOT NULL,
    answered_at                timestamptz,
    ended_at                   timestamptz NOT NULL,
    total_duration_seconds     integer     NOT NULL CHECK (total_duration_seconds >= 0),
    wait_time_duration_seconds integer     NOT NULL CHECK (wait_time_duration_seconds >= 0),
    talk_time_duration_seconds integer     NOT NULL CHECK (talk_time_duration_seconds >= 0),
    -- The call record's time as the API shows it: when the call started on the platform.
    created_at                 timestamptz NOT NULL,
    -- When this service stored the call, and the platform event it came from (for tracing).
    ingested_at                timestamptz NOT NULL DEFAULT now(),
    source_event_id            text        NOT NULL,
    -- The id of this call's call.finished event: fixed at insert, so a re-published event carries
    -- the same id and consumers can drop the copy. finished_published_at is set once the broker
    -- confirmed the event; a null one is published again when the platform event comes back.
    finished_event_id          uuid        NOT NULL DEFAULT gen_random_uuid(),
    finished_published_at      timestamptz,
    CONSTRAINT calls_platform_call_id_key UNIQUE (platform_call_id)
);

-- The list filters: leads or orders (one of them is required) in the list's order, users, statuses.
CREATE INDEX calls_lead_created_idx   ON calls (lead_id, created_at DESC, id DESC);
CREATE INDEX calls_order_created_idx  ON calls (order_id, created_at DESC, id DESC);
CREATE INDEX calls_user_created_idx   ON calls (user_id, created_at DESC, id DESC);
CREATE INDEX calls_status_created_idx ON calls (status_id, created_at DESC, id DESC);
-- Calls whose call.finished still waits for the broker's confirm.
CREATE INDEX calls_finished_unpublished_idx ON calls (id) WHERE finished_published_at IS NULL;

-- +goose Down
DROP TABLE calls;
