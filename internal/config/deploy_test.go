package config_test

import (
	"testing"

	"github.com/toolhost/toolhost/internal/config"
)

// The config files shipped under deploy/ are valid config files: the
// Compose fleet's (deploy/compose/toolhost.toml).
func TestDeployConfigsLoad(t *testing.T) {
	c, err := config.Load("../../deploy/compose/toolhost.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.URL != "redis://redis:6379/0" || c.Redis.Replicas != 3 {
		t.Errorf("deploy/compose/toolhost.toml: redis %+v, want the redis service and 3 replicas", c.Redis)
	}
}
