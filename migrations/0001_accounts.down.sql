DROP TABLE server_secrets;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE users;
