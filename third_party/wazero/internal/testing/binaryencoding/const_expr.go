package binaryencoding

import (
	"github.com/toolhost/toolhost/third_party/wazero/internal/wasm"
)

func encodeConstantExpression(expr wasm.ConstantExpression) (ret []byte) {
	ret = append(ret, expr.Data...)
	return
}
