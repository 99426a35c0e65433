-- +goose Up
-- The same figures by UTC hour (hour = the start of the hour), kept by report-worker in the
-- transaction that adds to the 15-minute rows. A report whose intervals all start and end on whole
-- hours of UTC (every hour and day of a zone whose offset is whole hours over the period) sums
-- these: a quarter of the rows of the 15-minute grid. Other zones keep reading the 15-minute rows.
-- order_hours.leads_called is the distinct leads called in the hour: a lead counts when its row of
-- lead_call_hours is new, so an hour's figure needs no lead rows at all.
CREATE TABLE order_hours (
    order_id     bigint      NOT NULL,
    hour         timestamptz NOT NULL,
    calls        bigint      NOT NULL DEFAULT 0,
    answered     bigint      NOT NULL DEFAULT 0,
    handled      bigint      NOT NULL DEFAULT 0,
    abandoned    bigint      NOT NULL DEFAULT 0,
    talk_seconds bigint      NOT NULL DEFAULT 0,
    leads_called bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (order_id, hour)
);
CREATE INDEX order_hours_hour_idx ON order_hours (hour);

-- The leads called in each hour: leads called over several hours counts each lead once.
CREATE TABLE lead_call_hours (
    order_id bigint      NOT NULL,
    hour     timestamptz NOT NULL,
    lead_id  bigint      NOT NULL,
    PRIMARY KEY (order_id, hour, lead_id)
);
CREATE INDEX lead_call_hours_hour_idx ON lead_call_hours (hour);

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
LOCK TABLE order_buckets, lead_call_buckets, status_buckets IN SHARE MODE;
INSERT INTO lead_call_hours (order_id, hour, lead_id)
SELECT DISTINCT order_id, date_trunc('hour', bucket, 'UTC'), lead_id FROM lead_call_buckets;
INSERT INTO order_hours (order_id, hour, calls, answered, handled, abandoned, talk_seconds, leads_called)
SELECT o.order_id, o.hour, o.calls, o.answered, o.handled, o.abandoned, o.talk_seconds, coalesce(l.leads, 0)
FROM (SELECT order_id, date_trunc('hour', bucket, 'UTC') AS hour, sum(calls) AS calls, sum(answered) AS answered,
             sum(handled) AS handled, sum(abandoned) AS abandoned, sum(talk_seconds) AS talk_seconds
      FROM order_buckets GROUP BY 1, 2) AS o
LEFT JOIN (SELECT order_id, hour, count(*) AS leads FROM lead_call_hours GROUP BY 1, 2) AS l USING (order_id, hour);
INSERT INTO status_hours (order_id, hour, status_id, entered)
SELECT order_id, date_trunc('hour', bucket, 'UTC'), status_id, sum(entered) FROM status_buckets GROUP BY 1, 2, 3;

-- +goose Down
DROP TABLE status_hours;
DROP TABLE lead_call_hours;
DROP TABLE order_hours;
