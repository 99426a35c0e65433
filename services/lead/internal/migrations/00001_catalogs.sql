-- +goose Up
-- Lead statuses. Only statuses of category in_progress may be given on create; success and
-- failure are final outcomes set later (by agents or call results).
CREATE TABLE lead_statuses (
    id        int  PRIMARY KEY CHECK (id > 0),
    code      text NOT NULL,
    name      text NOT NULL,
    category  text NOT NULL CHECK (category IN ('in_progress', 'success', 'failure')),
    CONSTRAINT lead_statuses_code_key UNIQUE (code)
);
INSERT INTO lead_statuses (id, code, name, category) VALUES
    (1, 'new',            'New',                'in_progress'),
    (2, 'callback',       'Call back',          'in_progress'),
    (3, 'no_answer',      'No answer',          'in_progress'),
    (4, 'qualified',      'Qualified',          'success'),
    (5, 'rejected',       'Rejected',           'failure'),
    (6, 'duplicate',      'Duplicate',          'failure'),
    (7, 'wrong_number',   'Wrong number',       'failure'),
    (8, 'busy',           'Line busy',          'in_progress'),
    (9, 'not_interested', 'Not interested',     'failure');

-- Catalog of the custom fields a lead can carry values for (the order service keeps its own).
CREATE TABLE custom_fields (
    id          bigserial PRIMARY KEY,
    code        text        NOT NULL,
    name        text        NOT NULL,
    type        text        NOT NULL CHECK (type IN ('string', 'integer', 'number', 'boolean', 'date', 'select', 'multiselect')),
    options     text[]      NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT custom_fields_code_key UNIQUE (code)
);

-- +goose Down
DROP TABLE custom_fields;
DROP TABLE lead_statuses;
