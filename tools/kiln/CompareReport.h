//===- CompareReport.h - `kiln compare --html` -----------------*- C++ -*-===//
//
// One self-contained HTML page (no network: the comparison is embedded as JSON and drawn by an
// inline script) with the error of every value along the graph, the culprits marked, B's
// precision per value and a table sortable by any column. tests/tools/check_compare_report.py
// opens it in headless Chromium.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_COMPAREREPORT_H
#define KILN_TOOLS_KILN_COMPAREREPORT_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace kiln::cli {

/// Writes `comparison` (the object `kiln compare --json` prints) as an HTML page to `path`.
llvm::Error writeCompareReport(const std::string &path, const llvm::json::Value &comparison);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMPAREREPORT_H
