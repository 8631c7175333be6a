package oauth_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolhost/toolhost/internal/oauth"
)

// A refusal's status and challenge, and the metadata document the
// challenge points at.
func ExampleVerifier_Challenge() {
	v, err := oauth.New(oauth.Config{
		Issuer:         "https://auth.example.com",
		Resource:       "https://tools.example.com/mcp",
		RequiredScopes: []string{"tools:call"},
	})
	if err != nil {
		panic(err)
	}
	status, header := v.Challenge(nil) // no token sent
	fmt.Println(status, header)
	status, header = v.Challenge(&oauth.Error{Code: oauth.CodeInsufficientScope, Description: "the token lacks scope tools:call"})
	fmt.Println(status, header)
	doc, _ := json.Marshal(v.Metadata("https://tools.example.com/mcp"))
	fmt.Println(string(doc))
	// Output:
	// 401 Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp", scope="tools:call"
	// 403 Bearer error="insufficient_scope", error_description="the token lacks scope tools:call", resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp", scope="tools:call"
	// {"resource":"https://tools.example.com/mcp","authorization_servers":["https://auth.example.com"],"scopes_supported":["tools:call"],"bearer_methods_supported":["header"],"resource_name":"toolhost"}
}
