-- The interface language a user chose; '' follows the browser's
-- Accept-Language.
ALTER TABLE users ADD COLUMN language text NOT NULL DEFAULT ''
    CONSTRAINT users_language_check CHECK (language IN ('', 'en', 'de'));
