// RUN: kiln-opt %s -verify-diagnostics

// A resource blob shorter than its tensor type would make every reader run past its end.
func.func @short_blob() -> tensor<8xi8> {
  // expected-error @+1 {{'kiln.constant' op resource blob holds 4 bytes, but 'tensor<8xi8>' needs 8}}
  %0 = kiln.constant dense_resource<blob1> : tensor<8xi8>
  return %0 : tensor<8xi8>
}

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x0400000001FF7F80"
    }
  }
#-}
