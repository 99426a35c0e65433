-- +goose Up
-- Bulk imports (internal/imports). lead-api stores every row of an uploaded file in one
-- transaction before it answers 202; lead-worker then turns the pending rows into leads, a chunk
-- per transaction that also settles the chunk's rows and counters, so a row ends as created or
-- refused exactly once whichever process dies when.
CREATE TABLE lead_imports (
    id             uuid PRIMARY KEY,
    state          text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    format         text NOT NULL,
    -- The caller, whose access rules every row is checked under, as for a create.
    user_id        bigint,
    access_group   text NOT NULL,
    ip             text,
    -- The orderId and orderCode of the query, for rows that do not name their own.
    order_id       bigint,
    order_code     text,
    rows_total     integer NOT NULL,
    rows_done      integer NOT NULL DEFAULT 0,
    rows_created   integer NOT NULL DEFAULT 0,
    rows_refused   integer NOT NULL DEFAULT 0,
    error          text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    started_at     timestamptz,
    finished_at    timestamptz
);
-- The worker looks for imports with work left.
CREATE INDEX lead_imports_open ON lead_imports (created_at) WHERE state IN ('queued', 'running');

CREATE TABLE lead_import_rows (
    import_id  uuid NOT NULL REFERENCES lead_imports (id) ON DELETE CASCADE,
    row_no     integer NOT NULL,
    -- The row as a v2 create body (JSON text, decoded by the worker like an async job's); NULL when the row could not even be read (errors says why).
    body       text,
    status     text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'created', 'refused')),
    lead_id    bigint,
    errors     jsonb,
    PRIMARY KEY (import_id, row_no)
);
-- A chunk is the first pending rows of an import.
CREATE INDEX lead_import_rows_pending ON lead_import_rows (import_id, row_no) WHERE status = 'pending';

-- +goose Down
DROP TABLE lead_import_rows;
DROP TABLE lead_imports;
