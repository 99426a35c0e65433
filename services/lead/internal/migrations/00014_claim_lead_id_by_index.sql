-- +goose Up
-- claim_lead_id finds its key's newest lead, and links it, by index, whatever the size of leads
-- when its plans were made. plpgsql keeps a statement's plan for the session once a few calls ran
-- it, and a plan made while leads was nearly empty (a new database, the first minutes of a
-- deployment or of a bench) is a sequential scan: every lead the session claimed afterwards read
-- the whole table, until an ANALYZE of leads happened to replace the plan. A drain of 100,000
-- queued jobs into a new database ran at a third of its speed in two runs of three, the lookup
-- taking 190 ms for a batch of 200 leads instead of 5. With sequential scans off inside the
-- function its plans are the indexes' (leads_order_phone, the primary key) from the first call;
-- the setting costs a call about half a microsecond.
ALTER FUNCTION claim_lead_id(bigint, bigint, text, bigint) SET enable_seqscan = off;

-- +goose Down
ALTER FUNCTION claim_lead_id(bigint, bigint, text, bigint) RESET enable_seqscan;
