//===- KilnDialect.cpp - the kiln dialect -----------------------------------===//

#include "ir/KilnDialect.h"
#include "ir/KilnOps.h"

#include "ir/KilnDialect.cpp.inc"

using namespace mlir;

namespace kiln {

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                            Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

} // namespace kiln
