import Replica
@_spi(Kernel) import Simulator

/// `expect ...` lines, judged after settle.
extension TimelineParser {
  /// Anomaly kinds, as reports name them (`oracle.md`).
  static let anomalyKinds = [
    "lost-edit", "stale-overwrite", "resurrection", "dropped-event", "duplicate-event", "stranded-record", "divergence",
    "phantom-value", "stalled-sync", "dangling-reference", "logical-duplicate", "concurrent-overwrite", "delete-update-conflict", "access-leak",
    "missing-asset",
  ]

  static let expectationForms =
    "no violations, no KIND, KIND == N, converged, ID.field == VALUE, ID.field in VALUE..., ID exists or ID deleted"

  mutating func parseExpect(_ i: Int) {
    let t = lines[i].tokens
    guard t.count >= 2 else {
      return missing(i, "expected what to expect: \(Self.expectationForms)")
    }
    guard let kind = expectationKind(i) else { return }
    expectations.append(Expectation(kind: kind, text: lines[i].trimmedContent, location: location(i, t[0])))
  }

  func isComparison(_ token: ScenarioToken) -> Bool {
    token.is("==") || token.is("<=") || token.is(">=")
  }

  mutating func expectationKind(_ i: Int) -> ExpectationKind? {
    let t = lines[i].tokens
    let first = t[1]
    guard first.isWord else {
      error(i, first, "expected what to expect, found a string: \(Self.expectationForms)")
      return nil
    }
    // `expect ID exists` / `expect ID deleted` (first: an id may be called `no` or `converged`).
    if t.count == 3, t[2].is("exists") || t[2].is("deleted") {
      guard checkName(i, first, "record id"), recordType(first.text, i, at: first.start) != nil else { return nil }
      return t[2].text == "exists" ? .exists(id: first.text) : .deleted(id: first.text)
    }
    if first.text == "no" {
      guard t.count >= 3 else {
        missing(i, "expected 'violations' or an anomaly kind after 'no'")
        return nil
      }
      guard expectEnd(i, after: 2, usage: "expect no KIND") else { return nil }
      if t[2].is("violations") { return .noViolations }
      guard let kind = anomalyKind(i, t[2], also: ["violations"]) else { return nil }
      return .none(kind: kind)
    }
    if first.text == "converged" && t.count == 2 { return .converged }
    if t.count >= 3, isComparison(t[2]), !first.text.contains(".") {
      guard let kind = anomalyKind(i, first, also: []) else { return nil }
      guard t.count >= 4 else {
        missing(i, "expected a count after '\(t[2].text)', as in 'expect \(kind) \(t[2].text) 0'")
        return nil
      }
      let n = t[3]
      guard n.isWord, !n.text.isEmpty, n.text.unicodeScalars.allSatisfy(Self.isDigit), let count = Int(n.text) else {
        error(i, n, "expected a count: a whole number from 0 to \(Int.max)")
        return nil
      }
      guard expectEnd(i, after: 3, usage: "expect KIND \(t[2].text) N") else { return nil }
      let comparison = ExpectationKind.Comparison(rawValue: t[2].text) ?? .equal
      return .count(kind: kind, comparison: comparison, value: count)
    }
    if first.text.contains(".") { return fieldExpectation(i) }
    // Nothing fits: say what was probably meant.
    if t.count == 2 {
      let hint = didYouMean(first.text, ["converged"] + Self.anomalyKinds)
      if !hint.isEmpty {
        error(i, first, "unknown expectation '\(Self.quoted(first.text))'" + hint)
      } else if Self.isIdentifier(first.text) {
        missing(i, "expected 'exists' or 'deleted' after '\(Self.quoted(first.text))'")
      } else {
        error(i, first, "unknown expectation '\(Self.quoted(first.text))'; expect \(Self.expectationForms)")
      }
      return nil
    }
    let second = t[2]
    let hint = didYouMean(second.text, ["exists", "deleted"])
    if !hint.isEmpty {
      error(i, second, "unknown expectation \(Self.shown(second))" + hint)
    } else if Self.anomalyKinds.contains(first.text) || !didYouMean(first.text, Self.anomalyKinds).isEmpty {
      error(i, second, "expected '==', '<=' or '>=' after the anomaly kind")
    } else {
      error(i, first, "unknown expectation; expect \(Self.expectationForms)")
    }
    return nil
  }

  /// An anomaly kind word; reports a misspelt one.
  mutating func anomalyKind(_ i: Int, _ token: ScenarioToken, also extra: [String]) -> String? {
    if token.isWord, Self.anomalyKinds.contains(token.text) { return token.text }
    error(
      i, token,
      "unknown anomaly kind \(Self.shown(token))"
        + didYouMean(token.text, Self.anomalyKinds + extra, else: "; the kinds are " + Self.anomalyKinds.joined(separator: ", ")))
    return nil
  }

  /// `expect ID.field == VALUE` and `expect ID.field in VALUE...`.
  mutating func fieldExpectation(_ i: Int) -> ExpectationKind? {
    let t = lines[i].tokens
    guard let target = idAndField(i, t[1], usage: "expect n1.title == \"Sermon\"") else { return nil }
    guard t.count >= 3 else {
      missing(i, "expected '==' or 'in' after '\(Self.quoted(t[1].text))'")
      return nil
    }
    let op = t[2]
    guard op.is("==") || op.is("in") else {
      error(i, op, "expected '==' or 'in' after '\(Self.quoted(t[1].text))', found \(Self.shown(op))")
      return nil
    }
    guard t.count >= 4 else {
      missing(i, "expected a value after '\(op.text)'")
      return nil
    }
    if op.text == "==" { expectEnd(i, after: 3, usage: "expect ID.field == VALUE") }
    var spec: FieldSpec?
    var ok = t.count == 4 || op.text == "in"
    if let type = recordType(target.id, i, at: target.idOffset) {
      if let type {
        spec = field(target.field, of: type, i, at: target.fieldOffset)
        if spec == nil { ok = false }
      }
    } else {
      ok = false
    }
    var values: [Literal] = []
    for token in (op.text == "==" ? t[3...3] : t[3...]) {
      guard let literal = value(i, Self.literal(token.text, isString: token.isString, at: token.start)) else {
        ok = false
        continue
      }
      if let spec, !checkFits(literal, spec, i, at: token.start) { ok = false }
      values.append(literal)
    }
    guard ok else { return nil }
    return op.text == "=="
      ? .fieldEquals(id: target.id, field: target.field, value: values[0]) : .fieldIn(id: target.id, field: target.field, values: values)
  }
}
