-- +goose Up
-- A report of every order reads one period of every order: by bucket, not by order first.
CREATE INDEX order_buckets_bucket_idx ON order_buckets (bucket);
CREATE INDEX lead_call_buckets_bucket_idx ON lead_call_buckets (bucket);
CREATE INDEX status_buckets_bucket_idx ON status_buckets (bucket);

-- +goose Down
DROP INDEX status_buckets_bucket_idx;
DROP INDEX lead_call_buckets_bucket_idx;
DROP INDEX order_buckets_bucket_idx;
