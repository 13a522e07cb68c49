// Package config reads the server's settings from environment variables and
// an optional YAML file, and validates them with app/valid. Every error
// names the setting by its environment variable, so an operator knows what to
// change whichever way they set it.
package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/valid"
)

// Config is every setting of the ruckus server. Each field names its
// environment variable (env) and YAML key (yaml); the environment wins.
type Config struct {
	DatabaseURL     string        `env:"DATABASE_URL" yaml:"database_url" validate:"required,postgres_url"`
	Addr            string        `env:"RUCKUS_ADDR" yaml:"addr" validate:"required,listen_addr"`
	LogLevel        string        `env:"RUCKUS_LOG_LEVEL" yaml:"log_level" validate:"oneof=debug info warn error"`
	LogFormat       string        `env:"RUCKUS_LOG_FORMAT" yaml:"log_format" validate:"oneof=text json"`
	SessionTTL      time.Duration `env:"RUCKUS_SESSION_TTL" yaml:"session_ttl" validate:"min=5m,max=8760h"`
	SessionKey      string        `env:"RUCKUS_SESSION_KEY" yaml:"session_key" validate:"omitempty,min=32"`
	PasswordCost    int           `env:"RUCKUS_PASSWORD_COST" yaml:"password_cost" validate:"min=4,max=16"`
	SignInAttempts  int           `env:"RUCKUS_SIGNIN_ATTEMPTS" yaml:"signin_attempts" validate:"min=1,max=1000"`
	SignInWindow    time.Duration `env:"RUCKUS_SIGNIN_WINDOW" yaml:"signin_window" validate:"min=1s,max=24h"`
	MaxRequestBytes int64         `env:"RUCKUS_MAX_REQUEST_BYTES" yaml:"max_request_bytes" validate:"min=1024"`
	ShutdownTimeout time.Duration `env:"RUCKUS_SHUTDOWN_TIMEOUT" yaml:"shutdown_timeout" validate:"min=1s,max=10m"`
	DatasetMaxBytes int64         `env:"RUCKUS_DATASET_MAX_BYTES" yaml:"dataset_max_bytes" validate:"min=1024"`
	DatasetMaxLine  int           `env:"RUCKUS_DATASET_MAX_LINE_BYTES" yaml:"dataset_max_line_bytes" validate:"min=256"`
	DatasetMaxItems int           `env:"RUCKUS_DATASET_MAX_ITEMS" yaml:"dataset_max_items" validate:"min=1"`
	AdminEmail      string        `env:"RUCKUS_ADMIN_EMAIL" yaml:"admin_email" validate:"omitempty,email"`
	AdminPassword   string        `env:"RUCKUS_ADMIN_PASSWORD" yaml:"admin_password" validate:"omitempty,min=8,max=72"`
	// AgentStaleAfter: an agent whose last heartbeat is older is stale and
	// its run is reassigned to another agent.
	AgentStaleAfter time.Duration `env:"RUCKUS_AGENT_STALE_AFTER" yaml:"agent_stale_after" validate:"min=2s,max=1h"`
	// GridCO2 is the grid's carbon intensity in grams CO₂e per kWh, for
	// the estimated emissions of a run's measured energy.
	GridCO2 float64 `env:"RUCKUS_GRID_CO2" yaml:"grid_co2" validate:"min=0,max=2000"`
	// LiveFragmentTTL is how long a benchmark's live fragments (runs table,
	// run cards), once rendered, are served to every viewer allowed to see
	// them; 0 renders them for each request.
	LiveFragmentTTL time.Duration `env:"RUCKUS_LIVE_FRAGMENT_TTL" yaml:"live_fragment_ttl" validate:"min=0,max=10s"`
	// DBPoolSize is the server's PostgreSQL connections at most (requests,
	// exports, River's server-side work).
	DBPoolSize int `env:"RUCKUS_DB_POOL_SIZE" yaml:"db_pool_size" validate:"min=4,max=1000"`
	// ExportsPerUser and ExportsTotal bound the streamed downloads running
	// at once; each holds one of the pool's connections, so ExportsTotal
	// must leave some for everything else.
	ExportsPerUser int `env:"RUCKUS_EXPORTS_PER_USER" yaml:"exports_per_user" validate:"min=1,max=100"`
	ExportsTotal   int `env:"RUCKUS_EXPORTS_TOTAL" yaml:"exports_total" validate:"min=1,ltfield=DBPoolSize"`
	// ExportStallTimeout cuts off a download whose client takes nothing
	// for that long, giving its connection back to the pool.
	ExportStallTimeout time.Duration `env:"RUCKUS_EXPORT_STALL_TIMEOUT" yaml:"export_stall_timeout" validate:"min=1s,max=1h"`
	// TrustedProxies lists the reverse proxies (addresses, CIDR ranges,
	// comma-separated) whose X-Forwarded-For is believed, for the sign-in
	// limiter and the logs.
	TrustedProxies string `env:"RUCKUS_TRUSTED_PROXIES" yaml:"trusted_proxies" validate:"omitempty,max=4096,ip_list"`
	// ProvidersFile is the provider table (remote providers beside
	// openai and anthropic: base URL, API key variable, dialect), a YAML
	// file; empty means the built-in table.
	ProvidersFile string `env:"RUCKUS_PROVIDERS_FILE" yaml:"providers_file" validate:"omitempty,max=4096"`
	// MetricsAddr is where Prometheus's /metrics is served, apart from the
	// public port; "off" serves none.
	MetricsAddr string `env:"RUCKUS_METRICS_ADDR" yaml:"metrics_addr" validate:"required,listen_addr_or_off"`
	// AttestationKey is the ed25519 seed (32 bytes, base64) that signs
	// finished runs' result digests; empty: one generated once and kept in
	// the database, as the session key is.
	AttestationKey string `env:"RUCKUS_ATTESTATION_KEY" yaml:"attestation_key" validate:"omitempty,base64_32"`
	// APIRatePerToken and APIRatePerUser bound the API requests per
	// APIRateWindow of one token and of all of one user's tokens together;
	// 0 turns that limit off.
	APIRatePerToken int           `env:"RUCKUS_API_RATE_PER_TOKEN" yaml:"api_rate_per_token" validate:"min=0,max=1000000"`
	APIRatePerUser  int           `env:"RUCKUS_API_RATE_PER_USER" yaml:"api_rate_per_user" validate:"min=0,max=1000000"`
	APIRateWindow   time.Duration `env:"RUCKUS_API_RATE_WINDOW" yaml:"api_rate_window" validate:"min=1s,max=1h"`
	// WebhookAllowedNetworks lists the internal networks (addresses, CIDR
	// ranges, comma-separated) webhook deliveries may reach; by default
	// none: no loopback, private, link-local or reserved address.
	WebhookAllowedNetworks string `env:"RUCKUS_WEBHOOK_ALLOWED_NETWORKS" yaml:"webhook_allowed_networks" validate:"omitempty,max=4096,ip_list"`
}

// Defaults returns the settings used where neither the file nor the
// environment says otherwise.
func Defaults() Config {
	return Config{
		Addr:               ":8080",
		LogLevel:           "info",
		LogFormat:          "text",
		SessionTTL:         30 * 24 * time.Hour,
		PasswordCost:       12,
		SignInAttempts:     10,
		SignInWindow:       15 * time.Minute,
		MaxRequestBytes:    8 << 20,
		ShutdownTimeout:    15 * time.Second,
		DatasetMaxBytes:    1 << 30,
		DatasetMaxLine:     1 << 20,
		DatasetMaxItems:    2_000_000,
		AgentStaleAfter:    15 * time.Second,
		GridCO2:            400,
		LiveFragmentTTL:    time.Second,
		DBPoolSize:         20,
		ExportsPerUser:     2,
		ExportsTotal:       6,
		ExportStallTimeout: 30 * time.Second,
		MetricsAddr:        "127.0.0.1:9464",
		APIRatePerToken:    600,
		APIRatePerUser:     1200,
		APIRateWindow:      time.Minute,
	}
}

// Error lists every invalid setting at once.
type Error struct {
	Problems []string
}

func (e *Error) Error() string {
	return "invalid configuration:\n  " + strings.Join(e.Problems, "\n  ")
}

// Load builds the configuration: defaults, then the YAML file at path (when
// path is not empty), then environment variables looked up with getenv.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Defaults()
	if path != "" {
		if err := loadFile(path, &cfg); err != nil {
			return cfg, err
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return cfg, err
	}
	return cfg, Validate(cfg)
}

// FromEnvironment is Load with the process environment, taking the file
// from RUCKUS_CONFIG when set.
func FromEnvironment() (Config, error) {
	return Load(os.Getenv("RUCKUS_CONFIG"), os.Getenv)
}

func loadFile(path string, cfg *Config) error {
	f, err := os.Open(path)
	if err != nil {
		return &Error{Problems: []string{fmt.Sprintf("RUCKUS_CONFIG: cannot open %s: %v", path, err)}}
	}
	defer f.Close()
	// The file uses the same types as the struct except durations, which YAML
	// cannot decode into time.Duration from "15s"; read into strings first.
	raw := map[string]yaml.Node{}
	if err := yaml.NewDecoder(f).Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return &Error{Problems: []string{fmt.Sprintf("RUCKUS_CONFIG: %s is not valid YAML: %v", path, err)}}
	}
	var problems []string
	known := map[string]bool{}
	forEachField(cfg, func(f field) {
		known[f.yaml] = true
		node, ok := raw[f.yaml]
		if !ok {
			return
		}
		if node.Kind != yaml.ScalarNode {
			problems = append(problems, fmt.Sprintf("%s (%s line %d): must be a single value", f.yaml, path, node.Line))
			return
		}
		if err := f.set(node.Value); err != nil {
			problems = append(problems, fmt.Sprintf("%s (%s line %d): %v", f.yaml, path, node.Line, err))
		}
	})
	for k, node := range raw {
		if !known[k] {
			problems = append(problems, fmt.Sprintf("%s (%s line %d): unknown setting", k, path, node.Line))
		}
	}
	if len(problems) > 0 {
		return &Error{Problems: problems}
	}
	return nil
}

func applyEnv(cfg *Config, getenv func(string) string) error {
	var problems []string
	forEachField(cfg, func(f field) {
		v := getenv(f.env)
		if v == "" {
			return
		}
		if err := f.set(v); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.env, err))
		}
	})
	if len(problems) > 0 {
		return &Error{Problems: problems}
	}
	return nil
}

type field struct {
	env, yaml string
	value     reflect.Value
}

func (f field) set(s string) error {
	switch f.value.Kind() {
	case reflect.String:
		f.value.SetString(s)
	case reflect.Int, reflect.Int64:
		if f.value.Type() == reflect.TypeOf(time.Duration(0)) {
			d, err := time.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("%q is not a duration (use a number with a unit, such as 30s, 15m or 720h)", s)
			}
			f.value.SetInt(int64(d))
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		f.value.SetInt(n)
	case reflect.Float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		f.value.SetFloat(v)
	default:
		return fmt.Errorf("unsupported setting type %s", f.value.Kind())
	}
	return nil
}

func forEachField(cfg *Config, fn func(field)) {
	v := reflect.ValueOf(cfg).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		fn(field{env: sf.Tag.Get("env"), yaml: sf.Tag.Get("yaml"), value: v.Field(i)})
	}
}

// Validate checks every setting and reports all problems together, each
// named by its environment variable.
func Validate(cfg Config) error {
	errs := valid.New("env").Struct(cfg)
	if len(errs) == 0 {
		return nil
	}
	problems := make([]string, 0, len(errs))
	for _, fe := range errs {
		problems = append(problems, fe.Path+": "+fe.Message)
	}
	return &Error{Problems: problems}
}
