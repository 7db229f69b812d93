//===- ReductionEinsumKernels.cpp - einsum ----------------------------------===//
//
// A general einsum (numpy rules as the interpreter's: implicit output = ellipsis axes then the
// labels seen once in ASCII order, `...` right-aligned across operands, repeated labels in a
// term take a diagonal, size-1 axes broadcast). One thread per output element runs nested loops
// over the summed labels, in the interpreter's loop order (first appearance across operands), and
// accumulates the products in the family's accumulator type. Einsums that are matmuls should be
// rewritten to kiln.matmul (cuBLASLt) by codegen; this kernel is the correct general fallback.
//
// The equation is parsed here (ir/ShapeRules.h needs LLVM, which the kernels library avoids).
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ReductionSupport.h"

#include <algorithm>
#include <cctype>

namespace kiln::codegen::reduction {
namespace {

constexpr int kEllipsisLabel = 256; // ellipsis axes are labels 256 + position

struct EinsumPlan {
  std::vector<std::vector<int>> inputLabels; // one label per operand axis
  std::vector<int> outputLabels;
};

std::string labelName(int label) {
  return label >= kEllipsisLabel ? "...[" + std::to_string(label - kEllipsisLabel) + "]"
                                 : std::string(1, static_cast<char>(label));
}

StatusOr<EinsumPlan> parseEinsum(const OpDesc &op, const std::string &equation,
                                 const std::vector<std::vector<int64_t>> &shapes) {
  std::string eq;
  for (char c : equation)
    if (c != ' ')
      eq += c;
  std::optional<std::string> rhs;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    rhs = eq.substr(arrow + 2);
    eq = eq.substr(0, arrow);
  }
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = eq.find(',', start);
    terms.push_back(eq.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    return op.error("equation '" + equation + "' has " + std::to_string(terms.size()) + " operand terms, the op " +
                    std::to_string(shapes.size()) + " operands");
  // Checks a term's characters: letters, and at most one "...".
  auto checkTerm = [&](const std::string &term) -> Status {
    size_t dots = term.find("...");
    if (dots != std::string::npos && term.find("...", dots + 3) != std::string::npos)
      return op.error("term '" + term + "' of '" + equation + "' has more than one ellipsis");
    for (size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        i += 2;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(term[i])))
        return op.error(std::string("label '") + term[i] + "' in '" + equation + "' is not a letter");
    }
    return Status();
  };
  int64_t ellipsisRank = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    if (Status s = checkTerm(terms[t]); !s.isOk())
      return s;
    size_t dots = terms[t].find("...");
    int64_t letters = static_cast<int64_t>(terms[t].size()) - (dots == std::string::npos ? 0 : 3);
    int64_t rank = static_cast<int64_t>(shapes[t].size());
    if (dots == std::string::npos ? letters != rank : letters > rank)
      return op.error("term '" + terms[t] + "' does not match operand " + std::to_string(t) + " of rank " +
                      std::to_string(rank));
    if (dots != std::string::npos)
      ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  EinsumPlan plan;
  std::map<int, int> counts;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<int> labels;
    int64_t rank = static_cast<int64_t>(shapes[t].size());
    for (size_t i = 0; i < terms[t].size(); ++i) {
      if (terms[t].compare(i, 3, "...") == 0) {
        int64_t own = rank - (static_cast<int64_t>(terms[t].size()) - 3);
        for (int64_t e = ellipsisRank - own; e < ellipsisRank; ++e)
          labels.push_back(kEllipsisLabel + static_cast<int>(e));
        i += 2;
        continue;
      }
      int label = static_cast<unsigned char>(terms[t][i]);
      labels.push_back(label);
      counts[label]++;
    }
    plan.inputLabels.push_back(std::move(labels));
  }
  if (!rhs) {
    for (int64_t e = 0; e < ellipsisRank; ++e)
      plan.outputLabels.push_back(kEllipsisLabel + static_cast<int>(e));
    for (auto [label, count] : counts)
      if (count == 1)
        plan.outputLabels.push_back(label);
    return plan;
  }
  if (Status s = checkTerm(*rhs); !s.isOk())
    return s;
  for (size_t i = 0; i < rhs->size(); ++i) {
    if (rhs->compare(i, 3, "...") == 0) {
      for (int64_t e = 0; e < ellipsisRank; ++e)
        plan.outputLabels.push_back(kEllipsisLabel + static_cast<int>(e));
      i += 2;
      continue;
    }
    int label = static_cast<unsigned char>((*rhs)[i]);
    if (!counts.count(label))
      return op.error(std::string("output label '") + (*rhs)[i] + "' of '" + equation + "' is not an input label");
    if (std::find(plan.outputLabels.begin(), plan.outputLabels.end(), label) != plan.outputLabels.end())
      return op.error(std::string("output label '") + (*rhs)[i] + "' of '" + equation + "' is repeated");
    plan.outputLabels.push_back(label);
  }
  return plan;
}

} // namespace

StatusOr<EmittedKernels> emitEinsum(const OpDesc &op, const EmitContext &context) {
  if (op.operands.empty() || op.results.size() != 1)
    return op.error("expects at least one operand and one result");
  const TensorDesc &result = op.results[0];
  const DType type = result.dtype;
  if (type == DType::Bool)
    return op.error("bool tensors are not supported (the op takes numeric tensors)");
  std::vector<std::vector<int64_t>> shapes;
  for (size_t t = 0; t < op.operands.size(); ++t) {
    if (!op.operands[t])
      return op.error("operand " + std::to_string(t) + " is missing");
    if (op.operands[t]->dtype != type)
      return op.error("operand " + std::to_string(t) + " has element type " +
                      std::string(plan::dtypeName(op.operands[t]->dtype)) + ", the result " +
                      std::string(plan::dtypeName(type)) + "; mixed element types are not supported");
    shapes.push_back(op.operands[t]->shape);
  }
  if (!op.hasAttr("equation"))
    return op.error("the equation attribute is missing");
  const std::string equation = op.attrString("equation", "");
  auto planOr = parseEinsum(op, equation, shapes);
  if (!planOr.isOk())
    return planOr.status();
  const EinsumPlan &plan = planOr.value();

  // Loops: the output labels, then the summed labels in order of first appearance. A label's
  // size is its size in any operand where it is not 1 (size-1 axes broadcast).
  std::vector<int> loops = plan.outputLabels;
  std::map<int, int64_t> sizes;
  for (size_t t = 0; t < shapes.size(); ++t)
    for (size_t a = 0; a < plan.inputLabels[t].size(); ++a) {
      int label = plan.inputLabels[t][a];
      int64_t size = shapes[t][a];
      auto [it, inserted] = sizes.emplace(label, size);
      if (!inserted && it->second != size) {
        if (it->second == 1)
          it->second = size;
        else if (size != 1)
          return op.error("label " + labelName(label) + " of '" + equation + "' has sizes " +
                          std::to_string(it->second) + " and " + std::to_string(size));
      }
      if (std::find(loops.begin(), loops.end(), label) == loops.end())
        loops.push_back(label);
    }
  std::vector<int64_t> expected;
  for (int label : plan.outputLabels)
    expected.push_back(sizes.count(label) ? sizes[label] : 1);
  if (expected != result.shape)
    return op.error("equation '" + equation + "' gives shape " + formatShape(expected) + ", the result has " +
                    formatShape(result.shape));

  // Per operand and loop: the stride its flat index moves by (diagonals add up; broadcast 0).
  std::vector<std::vector<int64_t>> step(shapes.size(), std::vector<int64_t>(loops.size(), 0));
  for (size_t t = 0; t < shapes.size(); ++t) {
    std::vector<int64_t> strides = rowMajorStrides(shapes[t]);
    for (size_t a = 0; a < plan.inputLabels[t].size(); ++a) {
      if (shapes[t][a] == 1)
        continue;
      size_t l = std::find(loops.begin(), loops.end(), plan.inputLabels[t][a]) - loops.begin();
      step[t][l] += strides[a];
    }
  }

  const std::string fn = context.symbol + "einsum";
  const std::string acc = accType(type);
  const bool isFloat = plan::isFloat(type);
  const size_t outputLoops = plan.outputLabels.size();
  std::string params;
  std::vector<KernelArg> args;
  for (size_t t = 0; t < shapes.size(); ++t) {
    params += param(type, "in" + std::to_string(t), true) + ", ";
    args.push_back(KernelArg::operand(static_cast<uint32_t>(t)));
  }
  params += param(type, "out", false);
  args.push_back(KernelArg::result(0));

  // Output coordinates of o, then one nested loop per summed label.
  std::string body;
  std::vector<int64_t> outStrides = rowMajorStrides(result.shape);
  for (size_t l = 0; l < outputLoops; ++l) {
    std::string coord = outStrides[l] == 1 ? "o" : "(o / " + literalInt(outStrides[l]) + ")";
    if (l != 0)
      coord = "(" + coord + " % " + literalInt(result.shape[l]) + ")";
    body += "    const long long i" + std::to_string(l) + " = " + coord + ";\n";
  }
  body += "    " + acc + " sum = " + (isFloat ? typedLiteral(acc, 0) : "0ULL") + ";\n";
  std::string indent = "    ";
  for (size_t l = outputLoops; l < loops.size(); ++l) {
    std::string i = "i" + std::to_string(l);
    body += indent + "for (long long " + i + " = 0; " + i + " < " + literalInt(sizes[loops[l]]) + "; ++" + i + ") {\n";
    indent += "  ";
  }
  std::string term = isFloat ? typedLiteral(acc, 1) : "1ULL";
  for (size_t t = 0; t < shapes.size(); ++t) {
    std::string off;
    for (size_t l = 0; l < loops.size(); ++l)
      if (step[t][l] != 0)
        off += (off.empty() ? "" : " + ") + std::string("i") + std::to_string(l) +
               (step[t][l] == 1 ? "" : " * " + literalInt(step[t][l]));
    term += " * " + loadAcc(type, "in" + std::to_string(t), off.empty() ? "0" : off);
  }
  body += indent + "sum = sum + " + term + ";\n";
  for (size_t l = outputLoops; l < loops.size(); ++l) {
    indent.resize(indent.size() - 2);
    body += indent + "}\n";
  }
  body += "    kiln_st(out, o, sum);\n";

  EmittedKernels out;
  out.source = "extern \"C\" __global__ void __launch_bounds__(256) " + fn + "(" + params + ") {\n" +
               "  for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < " +
               literalInt(result.numElements()) + "; o += (long long)gridDim.x * blockDim.x) {\n" + body + "  }\n}\n";
  out.launches.push_back(gridStrideLaunch(fn, result.numElements(), args));
  return out;
}

} // namespace kiln::codegen::reduction
