import Replica
@_spi(Kernel) import Simulator

/// Reads scenario files (`docs/scenario-format.md`). The whole file is checked before anything
/// runs, and every problem is reported at once, sorted by line then column.
///
///     switch ScenarioParser.parse(text, source: "scenarios/two-device-acceptance.scenario") {
///     case .success(let scenario): run(scenario)
///     case .failure(let errors): print(errors.rendered(), terminator: "")   // exit 65
///     }
///
/// - Complexity: O(*n*) in the size of the file, plus the "did you mean" searches.
public enum ScenarioParser {
  /// Parses and checks a scenario. Never traps, whatever the input. Text of more than 16 MiB
  /// of UTF-8 is refused with one diagnostic.
  /// - Parameters:
  ///   - text: the file's contents (`\r\n` line endings and a leading byte-order mark accepted).
  ///   - source: the path or name to show in diagnostics; without a `scenario` line, the
  ///     scenario's name is this without its directory and `.scenario` extension.
  public static func parse(_ text: String, source: String) -> Result<ScenarioFile, ScenarioErrors> {
    ScenarioParse(source: source, text: text).run()
  }

  /// Parses and checks a scenario given as UTF-8 bytes, as read from a file: like
  /// ``parse(_:source:)``, and invalid UTF-8 in a string or a word is reported where it is (in a
  /// comment it is ignored).
  package static func parse(utf8 bytes: some Collection<UInt8>, source: String) -> Result<ScenarioFile, ScenarioErrors> {
    if let result = bytes.withContiguousStorageIfAvailable({ ScenarioParse(source: source, utf8: $0).run() }) { return result }
    return Array(bytes).withUnsafeBufferPointer { ScenarioParse(source: source, utf8: $0).run() }
  }

  /// The name a scenario gets from its file: `scenarios/x.scenario` → `x`.
  public static func defaultName(forSource source: String) -> String {
    var base = Substring(source)
    if let slash = base.lastIndex(where: { $0 == "/" || $0 == "\\" }) { base = base[base.index(after: slash)...] }
    if base.hasSuffix(".scenario") { base = base.dropLast(".scenario".count) }
    return String(base)
  }
}

/// One parse of one file: the lexed lines and the diagnostics found so far, shared by the two
/// parts that read the file — ``DeclarationParser`` (header and schema) and ``TimelineParser``
/// (the timeline, records and expectations), each with its own state.
///
/// Lines are decoded and lexed as they are read; blank and comment-only lines are not kept
/// (nothing refers to them), except line 1, where problems with the whole file are reported.
/// Only the first diagnostics in line order are kept (``ScenarioErrors/limit``); the others are
/// counted. So memory stays proportional to the file, whatever is in it.
final class ScenarioParse {
  let source: String
  var lines: [ScenarioLine] = []
  var diagnostics: [Diagnostic] = []
  /// Diagnostics found but dropped, beyond the first ``ScenarioErrors/limit`` in line order.
  var dropped = 0
  /// The input as a whole was refused (too large, or with `\r` line endings): nothing else is
  /// checked.
  var refused = false
  /// Once ``ScenarioErrors/limit`` diagnostics are kept: the line and column of the last one.
  var cutoff: (line: Int, column: Int)?

  /// Reads `text`.
  init(source: String, text: String) {
    self.source = source
    var text = text
    text.withUTF8 { read($0) }
  }

  /// Reads UTF-8 bytes; invalid sequences are reported where they matter.
  init(source: String, utf8 bytes: UnsafeBufferPointer<UInt8>) {
    self.source = source
    read(bytes)
  }

  /// Splits, decodes and lexes the lines, reporting lexing problems.
  func read(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard bytes.count <= ScenarioInput.maxBytes else {
      return refuse(ScenarioInput.tooLargeMessage(byteCount: bytes.count), lineText: ScenarioInput.firstLine(bytes))
    }
    lines.reserveCapacity(ScenarioInput.keptLineCount(bytes))
    // Scratch space for one line's scalars, reused: no line keeps it.
    var scalars: [Unicode.Scalar] = []
    var carriageReturn: Int?
    let sawNewline = ScenarioInput.forEachLine(bytes) { number, lineBytes in
      let decoded = ScenarioInput.decode(lineBytes, into: &scalars)
      var line = ScenarioLine(number: number, text: decoded.text, scalars: scalars)
      let lexed = ScenarioLexer.lex(&line, scalars, firstInvalid: decoded.firstInvalid)
      if number == 1 { carriageReturn = lexed.carriageReturn }
      guard lexed.problem != nil || !line.tokens.isEmpty || number == 1 else { return }
      lines.append(line)
      if let problem = lexed.problem { error(lines.count - 1, problem.offset, problem.message) }
    }
    // No \n, and a \r outside a string of the only line: the file has classic Mac OS line
    // endings. Say so, rather than report what its one long line gets wrong.
    if !sawNewline, let line = lines.first, let offset = carriageReturn {
      refused = true
      dropped = 0
      diagnostics = [
        Diagnostic(
          source: source, location: SourceLocation(line: 1, column: line.column(offset)), message: ScenarioLexer.carriageReturnLinesMessage,
          lineText: line.text)
      ]
    }
  }

  /// Refuses the whole input with one diagnostic at line 1, column 1.
  func refuse(_ message: String, lineText: String) {
    refused = true
    diagnostics = Self.refusal(source: source, message: message, lineText: lineText).diagnostics
  }

  /// The errors of an input refused as a whole: one diagnostic at line 1, column 1.
  static func refusal(source: String, message: String, lineText: String) -> ScenarioErrors {
    ScenarioErrors(
      diagnostics: [Diagnostic(source: source, location: SourceLocation(line: 1, column: 1), message: message, lineText: lineText)],
      source: source)
  }

  /// Checks the declarations, then the timeline; then the file or its errors.
  func run() -> Result<ScenarioFile, ScenarioErrors> {
    if refused { return .failure(ScenarioErrors(diagnostics: diagnostics, source: source)) }
    var declarations = DeclarationParser(session: self)
    declarations.run()
    var timeline = TimelineParser(session: self, declared: declarations)
    timeline.run()
    return finish(declarations, timeline)
  }

  /// The diagnostics in line order (then column, then the order found), the first
  /// ``ScenarioErrors/limit`` kept, and how many were left out.
  func sortedDiagnostics() -> (kept: [Diagnostic], omitted: Int) {
    let sorted = diagnostics.enumerated().sorted {
      ($0.element.location.line, $0.element.location.column, $0.offset)
        < ($1.element.location.line, $1.element.location.column, $1.offset)
    }.map(\.element)
    let kept = Array(sorted.prefix(ScenarioErrors.limit))
    return (kept, dropped + sorted.count - kept.count)
  }

  func finish(_ d: DeclarationParser, _ t: TimelineParser) -> Result<ScenarioFile, ScenarioErrors> {
    if !diagnostics.isEmpty {
      let (kept, omitted) = sortedDiagnostics()
      return .failure(ScenarioErrors(diagnostics: kept, source: source, omitted: omitted))
    }
    let timeline = t.entries.sorted {
      ($0.entry.time, $0.entry.action == .settle ? 1 : 0, $0.order) < ($1.entry.time, $1.entry.action == .settle ? 1 : 0, $1.order)
    }.map(\.entry)
    var file = ScenarioFile(
      source: source, name: d.name ?? ScenarioParser.defaultName(forSource: source), about: d.about, devices: d.devices,
      policy: d.policy ?? DeclarationParser.defaultPolicy, policyLocation: d.policyLocation, seed: d.seed, latency: d.latency,
      loss: d.loss, duplicate: d.duplicate, clocks: d.clocks, retention: d.retention, autosync: d.autosync, push: d.push,
      schema: Schema(types: d.types, deployed: d.deployed, imported: d.schemaImport), timeline: timeline, expectations: t.expectations)
    file.server = d.server
    file.bandwidth = d.bandwidth
    file.recordZones = t.recordZones
    file.accounts = d.accounts
    file.schemaSource = d.schemaSource
    file.appVersions = d.appVersions
    file.schemaLines = d.typeLines.merging(d.fieldLines) { a, _ in a }
    if let line = d.deployedLine { file.schemaLines["deployed"] = line }
    return .success(file)
  }

  /// Reports a problem at a scalar offset of line `lineIndex`. The message is only made when
  /// the diagnostic may be among those kept.
  func error(_ lineIndex: Int, _ offset: Int, _ message: @autoclosure () -> String) {
    let line: ScenarioLine? = lines.indices.contains(lineIndex) ? lines[lineIndex] : nil
    let location = SourceLocation(line: line?.number ?? 1, column: line?.column(offset) ?? 1)
    if let cutoff, (location.line, location.column) >= cutoff {
      dropped += 1
      return
    }
    let text = message()
    diagnostics.append(
      Diagnostic(source: source, location: location, message: text, lineText: line?.text ?? "", suggestion: Diagnostic.suggestion(in: text)))
    // Keep the first diagnostics in line order, not all of them: a file can have millions.
    // Among equal lines and columns, the array order is still the order found.
    if diagnostics.count >= 4 * ScenarioErrors.limit {
      let (kept, omitted) = sortedDiagnostics()
      diagnostics = kept
      dropped = omitted
      // A diagnostic at or after the last one kept would sort after it: it cannot be kept.
      if let last = kept.last, kept.count == ScenarioErrors.limit { cutoff = (last.location.line, last.location.column) }
    }
  }
}

/// A part of the parser: reads the shared lines, reports into the shared diagnostics.
protocol ScenarioParsePart {
  var session: ScenarioParse { get }
}

extension ScenarioParsePart {
  var lines: [ScenarioLine] { session.lines }
  var source: String { session.source }

  func error(_ lineIndex: Int, _ offset: Int, _ message: @autoclosure () -> String) { session.error(lineIndex, offset, message()) }

  func error(_ lineIndex: Int, _ token: ScenarioToken, _ message: @autoclosure () -> String) {
    session.error(lineIndex, token.start, message())
  }

  /// Reports `unexpected 'X'` at the first token after `index`, if there is one; returns
  /// whether the line ended there.
  @discardableResult
  func expectEnd(_ lineIndex: Int, after index: Int, usage: String) -> Bool {
    let t = lines[lineIndex].tokens
    guard index + 1 < t.count else { return true }
    error(lineIndex, t[index + 1], "unexpected \(Self.shown(t[index + 1])); write '\(usage)'")
    return false
  }

  func location(_ i: Int, _ token: ScenarioToken) -> SourceLocation {
    SourceLocation(line: lines[i].number, column: lines[i].column(token.start))
  }

  /// Reports that something is missing at the end of the line.
  func missing(_ lineIndex: Int, _ message: @autoclosure () -> String) {
    error(lineIndex, lines[lineIndex].endOfContent, message())
  }

  /// `; did you mean 'x'?` for a close candidate, else `otherwise`.
  func didYouMean(_ word: String, _ candidates: [String], else otherwise: String = "") -> String {
    // Long words cannot be typos of short names, and the edit distance is quadratic.
    guard word.unicodeScalars.count <= 64, let match = Suggestion.closest(to: word, in: candidates) else { return otherwise }
    return "; did you mean '\(match)'?"
  }

  /// A word for a message, cut short when long.
  static func quoted(_ word: String) -> String {
    word.count <= 40 ? word : String(word.prefix(40)) + "…"
  }

  /// A token for a message: `'word'` or `"string"`.
  static func shown(_ token: ScenarioToken) -> String {
    token.isString ? Literal.string(quoted(token.text)).description : "'\(quoted(token.text))'"
  }
}
