-- +goose Up
-- The same figures by UTC hour (hour = the start of the hour), kept by report-worker in the
-- transaction that adds to the 15-minute rows. A report whose intervals all start and end on whole
-- hours of UTC (every hour and day of a zone whose offset is whole hours over the period) sums
-- these: a quarter of the rows of the 15-minute grid. Other zones keep reading the 15-minute rows.
-- The leads called have no hourly rows (they would be a second row per call, which cost ingest more
-- than the reports gained): every report counts them over lead_call_buckets.
CREATE TABLE order_hours (
    order_id     bigint      NOT NULL,
    hour         timestamptz NOT NULL,
    calls        bigint      NOT NULL DEFAULT 0,
    answered     bigint      NOT NULL DEFAULT 0,
    handled      bigint      NOT NULL DEFAULT 0,
    abandoned    bigint      NOT NULL DEFAULT 0,
    talk_seconds bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, hour)
);
CREATE INDEX order_hours_hour_idx ON order_hours (hour);

CREATE TABLE status_hours (
    order_id  bigint      NOT NULL,
    hour      timestamptz NOT NULL,
    status_id bigint      NOT NULL,
    entered   bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, hour, status_id)
);
CREATE INDEX status_hours_hour_idx ON status_hours (hour);

-- The hours of what is counted already, from the 15-minute rows; a worker adding to those meanwhile
-- waits for this transaction, so nothing is counted in one grid and not the other.
LOCK TABLE order_buckets, status_buckets IN SHARE MODE;
INSERT INTO order_hours (order_id, hour, calls, answered, handled, abandoned, talk_seconds)
SELECT order_id, date_trunc('hour', bucket, 'UTC'), sum(calls), sum(answered), sum(handled), sum(abandoned), sum(talk_seconds)
FROM order_buckets GROUP BY 1, 2;
INSERT INTO status_hours (order_id, hour, status_id, entered)
SELECT order_id, date_trunc('hour', bucket, 'UTC'), status_id, sum(entered) FROM status_buckets GROUP BY 1, 2, 3;

-- +goose Down
DROP TABLE status_hours;
DROP TABLE order_hours;
