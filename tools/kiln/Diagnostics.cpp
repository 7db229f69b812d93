//===- Diagnostics.cpp - MLIR diagnostics as kiln messages ----------------===//

#include "Diagnostics.h"

#include "ir/Provenance.h"

#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

std::string describeLocation(mlir::Location loc) {
  if (std::optional<std::string> node = describeNode(loc))
    return *node;
  // Kiln MLIR written by hand (or by `kiln import`, which prints no locations) has positions
  // in the .mlir file the parser read. Line 0 is the importer's "the model as a whole".
  auto file = loc->findInstanceOf<mlir::FileLineColRange>();
  if (!file)
    return "";
  if (file.getStartLine() == 0)
    return file.getFilename().str();
  return (file.getFilename().getValue() + ":" + llvm::Twine(file.getStartLine()) + ":" +
          llvm::Twine(file.getStartColumn()))
      .str();
}

DiagnosticPrinter::DiagnosticPrinter(mlir::MLIRContext &context, llvm::StringRef prefix, bool showRemarks)
    : prefix(prefix.str()), showRemarks(showRemarks), handler(&context, [this](mlir::Diagnostic &diagnostic) {
        print(diagnostic);
        return mlir::success();
      }) {
  // MLIR would attach the whole op, constants and all, as a note: the node name says which op.
  context.printOpOnDiagnostic(false);
}

static llvm::StringRef severityName(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return "error";
  case mlir::DiagnosticSeverity::Warning:
    return "warning";
  case mlir::DiagnosticSeverity::Remark:
    return "remark";
  case mlir::DiagnosticSeverity::Note:
    return "note";
  }
  return "note";
}

void DiagnosticPrinter::print(mlir::Diagnostic &diagnostic) {
  mlir::DiagnosticSeverity severity = diagnostic.getSeverity();
  if (severity == mlir::DiagnosticSeverity::Remark && !showRemarks)
    return;
  if (severity == mlir::DiagnosticSeverity::Error)
    ++errors;
  std::string where = describeLocation(diagnostic.getLocation());
  llvm::raw_ostream &os = llvm::errs();
  auto line = [&](llvm::StringRef kind, llvm::StringRef place, const mlir::Diagnostic &d) {
    os << prefix << ": " << kind << ": ";
    if (!place.empty())
      os << place << ": ";
    os << d.str() << "\n";
  };
  line(severityName(severity), where, diagnostic);
  for (const mlir::Diagnostic &note : diagnostic.getNotes()) {
    // A note about the same op as its diagnostic need not name it again.
    std::string noteWhere = describeLocation(note.getLocation());
    line("note", noteWhere == where ? "" : noteWhere, note);
  }
}

} // namespace kiln::cli
