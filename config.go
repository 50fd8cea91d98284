package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// config is a streamdbg.yaml file: Flink-style keys, flat
// ("state.backend.type: pebble") or nested, as Flink's config.yaml.
type config struct {
	path   string
	values map[string]string
}

// configKeys are the keys streamdbg reads; others are refused so that a
// typo does not pass silently.
var configKeys = map[string]string{
	"state.backend.type":               "keyed state backend: heap or pebble",
	"state.backend.pebble.dir":         "directory of the pebble backend's files",
	"parallelism.default":              "default parallelism of the job's operators",
	"pipeline.max-parallelism":         "number of key groups",
	"execution.checkpointing.interval": "records between in-memory checkpoints",
}

// loadConfig reads the file named by --config, or streamdbg.yaml in the
// working directory when there is one.
func loadConfig(path string) (*config, error) {
	explicit := path != ""
	if !explicit {
		path = "streamdbg.yaml"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if !explicit && os.IsNotExist(err) {
			return &config{values: map[string]string{}}, nil
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	c := &config{path: path, values: map[string]string{}}
	if err := flatten("", raw, c.values); err != nil {
		return nil, fmt.Errorf("config %s: %v", path, err)
	}
	var unknown []string
	for k := range c.values {
		if _, ok := configKeys[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := make([]string, 0, len(configKeys))
		for k := range configKeys {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("config %s: unknown keys %s (known: %s)", path, strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return c, nil
}

// flatten turns nested maps into dotted keys. A key given twice, flat and
// nested ("parallelism.default: 3" and "parallelism: {default: 1}"), is an
// error: which one won would depend on map order.
func flatten(prefix string, v any, out map[string]string) error {
	x, ok := v.(map[string]any)
	if !ok {
		if _, dup := out[prefix]; dup {
			return fmt.Errorf("key %s is given twice (flat and nested): give it once", prefix)
		}
		out[prefix] = fmt.Sprint(v)
		return nil
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if err := flatten(key, x[k], out); err != nil {
			return err
		}
	}
	return nil
}

func (c *config) str(key string) (string, bool) {
	v, ok := c.values[key]
	return v, ok
}

func (c *config) int(key string) (int, bool, error) {
	v, ok := c.values[key]
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, false, fmt.Errorf("config %s: %s: %q is not a number", c.path, key, v)
	}
	return n, true, nil
}
