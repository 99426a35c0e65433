-- +goose Up
-- The paced lease's settings of an order (services/order/README.md, "Pacing"). Existing orders
-- get the defaults a create gives.
ALTER TABLE orders
    ADD COLUMN pacing_mode text NOT NULL DEFAULT 'progressive'
        CHECK (pacing_mode IN ('preview', 'progressive', 'predictive')),
    ADD COLUMN max_abandon_rate_percent double precision NOT NULL DEFAULT 3.0
        CHECK (max_abandon_rate_percent > 0 AND max_abandon_rate_percent <= 100),
    ADD COLUMN abandon_window text NOT NULL DEFAULT '30d' CHECK (abandon_window IN ('24h', '30d')),
    ADD COLUMN max_lines_per_agent double precision NOT NULL DEFAULT 3.0
        CHECK (max_lines_per_agent >= 1 AND max_lines_per_agent <= 10),
    ADD COLUMN drop_lockout_hours integer NOT NULL DEFAULT 72
        CHECK (drop_lockout_hours >= 0 AND drop_lockout_hours <= 8760);

-- +goose Down
ALTER TABLE orders DROP COLUMN pacing_mode, DROP COLUMN max_abandon_rate_percent, DROP COLUMN abandon_window,
    DROP COLUMN max_lines_per_agent, DROP COLUMN drop_lockout_hours;
