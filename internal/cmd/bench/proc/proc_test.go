package proc

import (
	"os/exec"
	"testing"
)

func TestRSSCPUAndStop(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	c := &Child{Name: "sleep", Cmd: cmd}
	rss, err := c.RSS()
	if err != nil || rss <= 0 {
		t.Errorf("RSS = %d, %v; want a positive size", rss, err)
	}
	if cpu, err := c.CPU(); err != nil || cpu < 0 {
		t.Errorf("CPU = %v, %v; want a time", cpu, err)
	}
	c.Stop()
	if cmd.ProcessState == nil {
		t.Fatal("Stop returned with the process still running")
	}
	if _, err := c.RSS(); err == nil {
		t.Error("RSS of an ended process read as a value")
	}
	if _, err := c.CPU(); err == nil {
		t.Error("CPU of an ended process read as a value")
	}
}
