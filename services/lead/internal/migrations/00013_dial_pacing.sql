-- +goose Up
-- The paced lease (internal/dialer, services/lead/README.md "Paced lease").
--
-- An abandoned call locks its number out of the queue until lockout_until (the order's
-- dropLockoutHours after the call ended): the lease skips the lead, explain names it.
ALTER TABLE leads ADD COLUMN lockout_until timestamptz;

-- The calls in flight of an order: its leads under a live lease (a call event ends the lease).
CREATE INDEX leads_in_flight ON leads (order_id, leased_until) WHERE lease_id IS NOT NULL;

-- Per-order dialing statistics, written with the call results (internal/callresult) in the same
-- transaction as the event's record, so each call counts once. Outgoing calls only. dialed: calls
-- ended; live: a person answered (answered or abandoned); abandoned: answered, no agent within 2 s;
-- handled and handle_seconds: the calls an agent talked on and their talk time (wrap-up is not
-- known here, so a handle time is the talk time). Minute buckets serve the recent answer rate,
-- hour buckets the 24 h and 30 d abandon rates: a pace reads at most 60 + 720 rows.
CREATE TABLE dial_stats_minute (
    order_id       bigint      NOT NULL,
    bucket         timestamptz NOT NULL,
    dialed         integer     NOT NULL DEFAULT 0,
    live           integer     NOT NULL DEFAULT 0,
    abandoned      integer     NOT NULL DEFAULT 0,
    handled        integer     NOT NULL DEFAULT 0,
    handle_seconds bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, bucket)
);
CREATE TABLE dial_stats_hour (LIKE dial_stats_minute INCLUDING ALL);

-- The recent handle times of each order, for the pacer's sample and the pace's mean and p90, with
-- how long each person took to answer (the pacer's answer delays).
CREATE TABLE dial_handle_times (
    order_id       bigint      NOT NULL,
    ended_at       timestamptz NOT NULL,
    seconds        integer     NOT NULL CHECK (seconds >= 0),
    answer_seconds integer     NOT NULL DEFAULT 0 CHECK (answer_seconds >= 0)
);
CREATE INDEX dial_handle_times_order ON dial_handle_times (order_id, ended_at DESC);

-- +goose Down
DROP TABLE dial_handle_times;
DROP TABLE dial_stats_hour;
DROP TABLE dial_stats_minute;
DROP INDEX leads_in_flight;
ALTER TABLE leads DROP COLUMN lockout_until;
