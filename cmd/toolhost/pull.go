package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	var flagID flagIdentity
	cmd := &cobra.Command{
		Use:   "pull [oci://REGISTRY/REPO[:TAG|@sha256:DIGEST]]",
		Short: "Fetch a tool module from an OCI registry into the plugins folder",
		Long: `pull fetches a module published in the CNCF Wasm OCI layout, checks the manifest
and the layer against their digests and size caps and the bytes as a
WebAssembly module, writes it into the plugins folder atomically (a running
serve hot-loads it) as REPO's last path element with .wasm, and records the
reference, the digests and the signer in the folder's toolhost.lock.

The artifact must be signed by a signer the config file's [trust] (or the
flags) trusts, in either form cosign writes: a Sigstore bundle attached as
an OCI referrer (cosign v3's default), keyless (checked against
--trusted-root and an identity: --certificate-oidc-issuer with
--certificate-identity or --certificate-identity-regexp) or by a --key;
or a key signature in the sha256-HEX.sig tag ('cosign sign --key' up to
v2, 'toolhost push --sign'). [trust.registries."PATTERN"] rules name the
only signers of the repositories they match. A pull that cannot be
verified is refused with the reason, unless --insecure-skip-verify is
given for that pull.

Without a reference, pull fetches again every module toolhost.lock records,
by the digest it pins (a tag that has moved since is not followed).

Plain HTTP is used only for a loopback registry or one given with
--insecure-registry (or [registries."HOST"] insecure = true in the config
file). Credentials come from the config file's [registries."HOST"]
(username and password, or token, each a secret reference such as
{env = "GHCR_TOKEN"}), else the Docker config file ($DOCKER_CONFIG/config.json,
as 'docker login' writes it).`,
		Example: `  toolhost pull --key cosign.pub oci://ghcr.io/acme/echo:v1
  toolhost pull --trusted-root trusted_root.json --certificate-oidc-issuer https://token.actions.githubusercontent.com \
    --certificate-identity-regexp '^https://github.com/acme/' oci://ghcr.io/acme/echo:v1
  toolhost pull --key cosign.pub oci://localhost:5000/echo@sha256:4f1c…
  toolhost pull --key cosign.pub   # what plugins/toolhost.lock pins`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, cfg, err := registryOptions(configFile, insecure)
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
			c := oci.New(opts)
			v, err := newVerifier(c, configFile, cfg, keyFiles, flagID, skipVerify)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(plugins, 0o755); err != nil {
				return err
			}
			if len(args) == 0 {
				lock, err := oci.ReadLock(plugins)
				if err != nil {
					return err
				}
				return repull(cmd, c, v, plugins, lock, insecure)
			}
			entry, err := pullInto(cmd.Context(), c, v, ref, "", plugins, ref.String())
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
	cmd.Flags().StringVar(&flagID.root, "trusted-root", "", "Sigstore trusted root FILE (trusted_root.json) for keyless bundles")
	cmd.Flags().StringVar(&flagID.Issuer, "certificate-oidc-issuer", "", "trust keyless bundles whose certificate has this OIDC issuer (with --certificate-identity or --certificate-identity-regexp)")
	cmd.Flags().StringVar(&flagID.Subject, "certificate-identity", "", "trust keyless bundles whose certificate subject is exactly this")
	cmd.Flags().StringVar(&flagID.SubjectRegexp, "certificate-identity-regexp", "", "trust keyless bundles whose certificate subject matches this regexp")
	cmd.Flags().StringVar(&configFile, "config", "", "TOML config file whose [trust] to apply and [registries] to use (docs/CONFIG.md)")
	cmd.Flags().BoolVar(&skipVerify, "insecure-skip-verify", false, "write the module without checking its signature (this pull only)")
	return cmd
}

// registryOptions are the registry client's options from the config file
// (none when configFile is empty): its [registries] credentials (secrets
// resolved) before the Docker config file's, its insecure registries after
// the flag's. The config is returned too (nil without a file).
func registryOptions(configFile string, insecure []string) (oci.Options, *config.Config, error) {
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
	return opts, cfg, nil
}

// relativeTo resolves a file name of the config file: a relative name is
// relative to the file's folder, so the file means the same from any
// directory.
func relativeTo(configFile, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(configFile), name)
}

// flagIdentity is pull's keyless flags, named as cosign verify's.
type flagIdentity struct {
	config.Identity
	root string
}

// verifier checks an artifact's signature before it is written.
type verifier struct {
	c     *oci.Client
	trust oci.Trust
	skip  bool
}

// newVerifier builds the trust policy: [trust] keys, identities and
// trusted_root with the flags added to them, and each
// [trust.registries] rule with its own signers (and the same root).
func newVerifier(c *oci.Client, configFile string, cfg *config.Config, keyFiles []string, fid flagIdentity, skip bool) (verifier, error) {
	v := verifier{c: c, skip: skip}
	var t config.Trust
	if cfg != nil {
		t = cfg.Trust
	}
	loadKeys := func(files []string, fromConfig bool) ([]oci.PublicKey, error) {
		var out []oci.PublicKey
		for _, f := range files {
			if fromConfig {
				f = relativeTo(configFile, f)
			}
			k, err := oci.LoadPublicKey(f)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
		return out, nil
	}
	ids := func(in []config.Identity) []oci.Identity {
		out := make([]oci.Identity, len(in))
		for i, id := range in {
			out[i] = oci.Identity(id)
		}
		return out
	}
	var err error
	if v.trust.Default.Keys, err = loadKeys(t.Keys, true); err != nil {
		return v, err
	}
	flagKeys, err := loadKeys(keyFiles, false)
	if err != nil {
		return v, err
	}
	v.trust.Default.Keys = append(v.trust.Default.Keys, flagKeys...)
	v.trust.Default.Identities = ids(t.Identities)
	if fid.Issuer != "" || fid.Subject != "" || fid.SubjectRegexp != "" {
		if fid.Issuer == "" || (fid.Subject == "") == (fid.SubjectRegexp == "") {
			return v, fmt.Errorf("a keyless identity needs --certificate-oidc-issuer and one of --certificate-identity and --certificate-identity-regexp")
		}
		if fid.SubjectRegexp != "" {
			if _, err := regexp.Compile(fid.SubjectRegexp); err != nil {
				return v, fmt.Errorf("--certificate-identity-regexp: %w", err)
			}
		}
		v.trust.Default.Identities = append(v.trust.Default.Identities, oci.Identity(fid.Identity))
	}
	rootFile := relativeTo(configFile, t.TrustedRoot)
	if fid.root != "" {
		rootFile = fid.root
	}
	if rootFile != "" {
		if v.trust.Default.Root, err = oci.LoadTrustedRoot(rootFile); err != nil {
			return v, err
		}
	}
	if len(v.trust.Default.Identities) > 0 && v.trust.Default.Root == nil {
		return v, fmt.Errorf("keyless identities are checked against a Sigstore trusted root: give --trusted-root FILE or [trust] trusted_root")
	}
	for pat, r := range t.Registries {
		p := oci.Policy{Identities: ids(r.Identities), Root: v.trust.Default.Root}
		if p.Keys, err = loadKeys(r.Keys, true); err != nil {
			return v, err
		}
		if v.trust.Rules == nil {
			v.trust.Rules = map[string]oci.Policy{}
		}
		v.trust.Rules[pat] = p
	}
	if v.trust.Default.Empty() && len(v.trust.Rules) == 0 && !skip {
		return v, fmt.Errorf("no trusted key or identity to verify the signature with: give --key FILE.pub, a keyless identity (--trusted-root with --certificate-oidc-issuer and --certificate-identity[-regexp]) or a --config with [trust], or --insecure-skip-verify to pull without verifying")
	}
	return v, nil
}

// verify returns the signer of pinned (none when verification is
// skipped), by the policy of its repository.
func (v verifier) verify(ctx context.Context, pinned oci.Reference) (oci.Signer, error) {
	if v.skip {
		return oci.Signer{}, nil
	}
	p := v.trust.For(pinned)
	if p.Empty() {
		return oci.Signer{}, &oci.Error{Ref: pinned.String(), Kind: oci.ErrWrongSigner,
			Detail: "no rule of [trust.registries] matches " + pinned.Repository() + " and [trust] itself trusts no signer"}
	}
	return v.c.VerifySigned(ctx, pinned, p)
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
		entry, err := pullInto(cmd.Context(), c, v, ref, m.ModuleDigest, dir, m.Reference, m.Name)
		if err != nil {
			return err
		}
		printPulled(cmd, dir, entry)
	}
	return nil
}

// pullInto fetches ref and writes it into dir, as name when one is given
// (else oci.ModuleName), recording it in dir's lock file as pulled from
// record. wantModule, when set, is the module digest the bytes must have.
func pullInto(ctx context.Context, c *oci.Client, v verifier, ref oci.Reference, wantModule, dir string, record string, name ...string) (oci.LockedFile, error) {
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
	entry := oci.LockedFile{Name: n, Reference: record, Digest: a.Digest, ModuleDigest: a.LayerDigest, Signature: signer.Form}
	if signer.KeyID != "" {
		entry.Signer = signer.KeyID
	} else if signer.Subject != "" {
		entry.Signer, entry.Issuer = signer.Subject, signer.Issuer
	}
	// The lock file first: a server that loads only what it vouches for
	// ([trust] require = "signed") must find the entry when the module
	// lands. A module that cannot be written takes its entry back out.
	// UpdateLock holds the folder's lock across read and write, so a
	// concurrent pull's entry is kept.
	var before oci.LockedFile
	var had bool
	if _, err := oci.UpdateLock(dir, func(l *oci.Lock) error {
		before, had = l.Get(n)
		l.Set(entry)
		return nil
	}); err != nil {
		return oci.LockedFile{}, err
	}
	if err := oci.WriteFileAtomic(dir, n, a.Module); err != nil {
		_, lerr := oci.UpdateLock(dir, func(l *oci.Lock) error {
			if had {
				l.Set(before)
			} else {
				l.Delete(n)
			}
			return nil
		})
		return oci.LockedFile{}, errors.Join(err, lerr)
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
