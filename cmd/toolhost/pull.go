package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/internal/oci"
	"github.com/toolhost/toolhost/internal/wasmcheck"
)

func newPullCmd() *cobra.Command {
	var plugins, configFile string
	var insecure, keyFiles []string
	var skipVerify bool
	cmd := &cobra.Command{
		Use:   "pull [oci://REGISTRY/REPO[:TAG|@sha256:DIGEST]]",
		Short: "Fetch a tool module from an OCI registry into the plugins folder",
		Long: `pull fetches a module published in the CNCF Wasm OCI layout, checks the manifest
and the layer against their digests and size caps and the bytes as a
WebAssembly module, writes it into the plugins folder atomically (a running
serve hot-loads it) as REPO's last path element with .wasm, and records the
reference, the digests and the signer in the folder's toolhost.lock.

The artifact must carry a cosign key signature (the sha256-HEX.sig tag, as
'cosign sign --key' writes it and 'toolhost push --sign' too) by one of the
keys given with --key or in the config file's [trust] keys; a pull that cannot be verified is refused with the
reason, unless --insecure-skip-verify is given for that pull.

Without a reference, pull fetches again every module toolhost.lock records,
by the digest it pins (a tag that has moved since is not followed).

Plain HTTP is used only for a loopback registry or one given with
--insecure-registry (or [registries."HOST"] insecure = true in the config
file). Credentials come from the config file's [registries."HOST"]
(username and password, or token, each a secret reference such as
{env = "GHCR_TOKEN"}), else the Docker config file ($DOCKER_CONFIG/config.json,
as 'docker login' writes it).`,
		Example: `  toolhost pull --key cosign.pub oci://ghcr.io/acme/echo:v1
  toolhost pull --key cosign.pub oci://localhost:5000/echo@sha256:4f1c…
  toolhost pull --key cosign.pub   # what plugins/toolhost.lock pins`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, trusted, err := registryOptions(configFile, insecure)
			if err != nil {
				return err
			}
			insecure = opts.Insecure
			var ref oci.Reference
			if len(args) == 1 {
				if ref, err = oci.ParseReference(args[0], insecure); err != nil {
					return err
				}
			}
			keys := append(trusted, keyFiles...)
			c := oci.New(opts)
			v, err := newVerifier(c, keys, skipVerify)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(plugins, 0o755); err != nil {
				return err
			}
			lock, err := oci.ReadLock(plugins)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				return repull(cmd, c, v, plugins, lock, insecure)
			}
			entry, err := pullInto(cmd.Context(), c, v, ref, "", plugins, lock, ref.String())
			if err != nil {
				return err
			}
			printPulled(cmd, plugins, entry)
			return nil
		},
	}
	cmd.Flags().StringVar(&plugins, "plugins", "./plugins", "plugins folder to write into (and its toolhost.lock)")
	cmd.Flags().StringSliceVar(&insecure, "insecure-registry", nil, "registry HOST[:PORT] that may be reached over plain HTTP (repeatable)")
	cmd.Flags().StringSliceVar(&keyFiles, "key", nil, "trusted public key FILE.pub (PEM, as cosign writes it; repeatable)")
	cmd.Flags().StringVar(&configFile, "config", "", "TOML config file whose [trust] keys to trust and [registries] to use (docs/CONFIG.md)")
	cmd.Flags().BoolVar(&skipVerify, "insecure-skip-verify", false, "write the module without checking its signature (this pull only)")
	return cmd
}

// registryOptions are the registry client's options from the config file
// (none when configFile is empty): its [registries] credentials (secrets
// resolved) before the Docker config file's, its insecure registries after
// the flag's, and its [trust] keys.
func registryOptions(configFile string, insecure []string) (oci.Options, []string, error) {
	if configFile == "" {
		return oci.Options{Insecure: insecure}, nil, nil
	}
	cfg, err := config.Load(configFile)
	if err == nil {
		err = cfg.ResolveSecrets()
	}
	if err != nil {
		return oci.Options{}, nil, err
	}
	creds := map[string]oci.Credentials{}
	for host, r := range cfg.Registries {
		if r.Username != "" || !r.Token.IsZero() {
			creds[host] = oci.Credentials{Username: r.Username, Password: r.Password.Value(), IdentityToken: r.Token.Value()}
		}
	}
	opts := oci.Options{Insecure: append(slices.Clone(insecure), cfg.InsecureRegistries()...), Keychain: oci.ConfigKeychain(creds, nil)}
	return opts, trustKeys(configFile, cfg.Trust.Keys), nil
}

// trustKeys resolves [trust] keys: a relative file name is relative to
// the config file's folder, so the file means the same from any directory.
func trustKeys(configFile string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		if !filepath.IsAbs(k) {
			k = filepath.Join(filepath.Dir(configFile), k)
		}
		out[i] = k
	}
	return out
}

// verifier checks an artifact's signature before it is written.
type verifier struct {
	c    *oci.Client
	keys []oci.PublicKey
	skip bool
}

func newVerifier(c *oci.Client, files []string, skip bool) (verifier, error) {
	v := verifier{c: c, skip: skip}
	for _, f := range files {
		k, err := oci.LoadPublicKey(f)
		if err != nil {
			return v, err
		}
		v.keys = append(v.keys, k)
	}
	if len(v.keys) == 0 && !skip {
		return v, fmt.Errorf("no trusted key to verify the signature with: give --key FILE.pub or a --config with [trust] keys, or --insecure-skip-verify to pull without verifying")
	}
	return v, nil
}

// verify returns the signer of pinned ("" when verification is skipped).
func (v verifier) verify(ctx context.Context, pinned oci.Reference) (string, error) {
	if v.skip {
		return "", nil
	}
	return v.c.Verify(ctx, pinned, v.keys)
}

// repull fetches every module the lock records, by its pinned digest, and
// checks that the bytes are the ones recorded.
func repull(cmd *cobra.Command, c *oci.Client, v verifier, dir string, lock *oci.Lock, insecure []string) error {
	if len(lock.Modules) == 0 {
		return fmt.Errorf("%s records no modules: give a reference (toolhost pull oci://REGISTRY/REPO:TAG)", filepath.Join(dir, oci.LockFile))
	}
	for _, m := range lock.Modules {
		ref, err := oci.ParseReference(m.Reference, insecure)
		if err != nil {
			return fmt.Errorf("%s in %s: %w", m.Name, oci.LockFile, err)
		}
		if ref, err = ref.AtDigest(m.Digest); err != nil {
			return err
		}
		entry, err := pullInto(cmd.Context(), c, v, ref, m.ModuleDigest, dir, lock, m.Reference, m.Name)
		if err != nil {
			return err
		}
		printPulled(cmd, dir, entry)
	}
	return nil
}

// pullInto fetches ref and writes it into dir, as name when one is given
// (else oci.ModuleName), recording it in lock (and dir's lock file) as
// pulled from record. wantModule, when set, is the module digest the
// bytes must have.
func pullInto(ctx context.Context, c *oci.Client, v verifier, ref oci.Reference, wantModule, dir string, lock *oci.Lock, record string, name ...string) (oci.LockedFile, error) {
	a, err := c.Pull(ctx, ref)
	if err != nil {
		return oci.LockedFile{}, err
	}
	if wantModule != "" && a.LayerDigest != wantModule {
		return oci.LockedFile{}, &oci.Error{Ref: ref.String(), Kind: oci.ErrDigestMismatch,
			Detail: fmt.Sprintf("the module is %s, %s records %s", a.LayerDigest, oci.LockFile, wantModule)}
	}
	// The structural check serve runs first, so that a module serve would
	// refuse to read is not written at all.
	if _, err := wasmcheck.Check(a.Module); err != nil {
		return oci.LockedFile{}, &oci.Error{Ref: ref.String(), Kind: oci.ErrNotWasm, Err: err}
	}
	signer, err := v.verify(ctx, a.Ref)
	if err != nil {
		return oci.LockedFile{}, err
	}
	n := oci.ModuleName(ref)
	if len(name) > 0 {
		n = name[0]
	}
	entry := oci.LockedFile{Name: n, Reference: record, Digest: a.Digest, ModuleDigest: a.LayerDigest, Signer: signer}
	// The lock file first: a server that loads only what it vouches for
	// ([trust] require = "signed") must find the entry when the module
	// lands. A module that cannot be written takes its entry back out.
	before := slices.Clone(lock.Modules)
	lock.Set(entry)
	if err := lock.Write(dir); err != nil {
		lock.Modules = before
		return oci.LockedFile{}, err
	}
	if err := oci.WriteFileAtomic(dir, n, a.Module); err != nil {
		lock.Modules = before
		return oci.LockedFile{}, errors.Join(err, lock.Write(dir))
	}
	return entry, nil
}

func printPulled(cmd *cobra.Command, dir string, m oci.LockedFile) {
	cmd.Printf("%s\t%s\t%s\n", filepath.Join(dir, m.Name), m.Reference, m.Digest)
}

func newPushCmd() *cobra.Command {
	var insecure []string
	var signKey, configFile string
	cmd := &cobra.Command{
		Use:   "push FILE.wasm oci://REGISTRY/REPO[:TAG]",
		Short: "Publish a tool module to an OCI registry",
		Long: `push publishes a module in the CNCF Wasm OCI layout (config
application/vnd.wasm.config.v0+json, one application/wasm layer) and prints the
reference pinned to the manifest's digest. The same module always gives the
same digest. Credentials and plain HTTP as for pull.

--sign KEY signs the manifest with a private key (cosign.key as 'cosign
generate-key-pair' writes it, decrypted with $COSIGN_PASSWORD, or a plain
PEM key) and adds the signature to the sha256-HEX.sig tag, as 'cosign sign
--key' does.`,
		Example: `  toolhost push --sign cosign.key plugins/echo.wasm oci://ghcr.io/acme/echo:v1`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			if _, err := wasmcheck.Check(b); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			opts, _, err := registryOptions(configFile, insecure)
			if err != nil {
				return err
			}
			ref, err := oci.ParseReference(args[1], opts.Insecure)
			if err != nil {
				return err
			}
			var signer signature.Signer
			if signKey != "" {
				pemBytes, err := os.ReadFile(signKey)
				if err != nil {
					return err
				}
				if signer, err = oci.ParsePrivateKey(pemBytes, []byte(os.Getenv("COSIGN_PASSWORD"))); err != nil {
					return fmt.Errorf("%s: %w", signKey, err)
				}
			}
			c := oci.New(opts)
			pinned, err := c.Push(cmd.Context(), ref, b)
			if err != nil {
				return err
			}
			if signer != nil {
				if err := c.Sign(cmd.Context(), pinned, signer); err != nil {
					return err
				}
			}
			cmd.Println(pinned.String())
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&insecure, "insecure-registry", nil, "registry HOST[:PORT] that may be reached over plain HTTP (repeatable)")
	cmd.Flags().StringVar(&signKey, "sign", "", "sign with this private key FILE (cosign's format; $COSIGN_PASSWORD)")
	cmd.Flags().StringVar(&configFile, "config", "", "TOML config file whose [registries] to use (docs/CONFIG.md)")
	return cmd
}
