-- +goose Up
-- Events already counted: a redelivered copy (same eventId) finds its id here and adds nothing. The
-- id is written in the transaction that adds the event to the aggregates.
CREATE TABLE handled_events (
    event_id   text        PRIMARY KEY,
    handled_at timestamptz NOT NULL DEFAULT now()
);

-- Calls of an order in one 15-minute bucket (bucket = the start of the bucket, UTC; a call falls in
-- the bucket of its start). answered: a person picked up (statuses answered and abandoned);
-- handled: an agent talked (status answered); talk_seconds: every call's talk time.
CREATE TABLE order_buckets (
    order_id     bigint      NOT NULL,
    bucket       timestamptz NOT NULL,
    calls        bigint      NOT NULL DEFAULT 0,
    answered     bigint      NOT NULL DEFAULT 0,
    handled      bigint      NOT NULL DEFAULT 0,
    abandoned    bigint      NOT NULL DEFAULT 0,
    talk_seconds bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, bucket)
);

-- The leads called in each bucket, so that leads called over an interval counts each lead once.
CREATE TABLE lead_call_buckets (
    order_id bigint      NOT NULL,
    bucket   timestamptz NOT NULL,
    lead_id  bigint      NOT NULL,
    PRIMARY KEY (order_id, bucket, lead_id)
);

-- Leads entering each status (created in it, or changed to it) per bucket of the change.
CREATE TABLE status_buckets (
    order_id  bigint      NOT NULL,
    bucket    timestamptz NOT NULL,
    status_id bigint      NOT NULL,
    entered   bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, bucket, status_id)
);

-- +goose Down
DROP TABLE status_buckets;
DROP TABLE lead_call_buckets;
DROP TABLE order_buckets;
DROP TABLE handled_events;
