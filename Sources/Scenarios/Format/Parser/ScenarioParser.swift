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
  /// Parses and checks a scenario. Never traps, whatever the input.
  /// - Parameters:
  ///   - text: the file's contents (`\r\n` line endings and a leading byte-order mark accepted).
  ///   - source: the path or name to show in diagnostics; without a `scenario` line, the
  ///     scenario's name is this without its directory and `.scenario` extension.
  public static func parse(_ text: String, source: String) -> Result<ScenarioFile, ScenarioErrors> {
    ScenarioParse(source: source, text: text).run()
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
final class ScenarioParse {
  let source: String
  var lines: [ScenarioLine]
  var diagnostics: [Diagnostic] = []

  init(source: String, text: String) {
    self.source = source
    self.lines = ScenarioLexer.lines(text)
  }

  /// Lexes every line, declarations first, then the timeline; then the file or its errors.
  func run() -> Result<ScenarioFile, ScenarioErrors> {
    for i in lines.indices {
      if let problem = ScenarioLexer.lex(&lines[i]) { error(i, problem.offset, problem.message) }
    }
    var declarations = DeclarationParser(session: self)
    declarations.run()
    var timeline = TimelineParser(session: self, declared: declarations)
    timeline.run()
    return finish(declarations, timeline)
  }

  func finish(_ d: DeclarationParser, _ t: TimelineParser) -> Result<ScenarioFile, ScenarioErrors> {
    if !diagnostics.isEmpty {
      let sorted = diagnostics.enumerated().sorted {
        ($0.element.location.line, $0.element.location.column, $0.offset)
          < ($1.element.location.line, $1.element.location.column, $1.offset)
      }.map(\.element)
      let kept = Array(sorted.prefix(ScenarioErrors.limit))
      return .failure(ScenarioErrors(diagnostics: kept, source: source, omitted: sorted.count - kept.count))
    }
    let timeline = t.entries.sorted {
      ($0.entry.time, $0.entry.action == .settle ? 1 : 0, $0.order) < ($1.entry.time, $1.entry.action == .settle ? 1 : 0, $1.order)
    }.map(\.entry)
    return .success(
      ScenarioFile(
        source: source, name: d.name ?? ScenarioParser.defaultName(forSource: source), about: d.about, devices: d.devices,
        policy: d.policy ?? DeclarationParser.defaultPolicy, policyLocation: d.policyLocation, seed: d.seed, latency: d.latency,
        loss: d.loss, duplicate: d.duplicate, clocks: d.clocks, retention: d.retention, autosync: d.autosync, push: d.push,
        schema: Schema(types: d.types, deployed: d.deployed), timeline: timeline, expectations: t.expectations))
  }

  /// Reports a problem at a scalar offset of line `lineIndex`.
  func error(_ lineIndex: Int, _ offset: Int, _ message: String) {
    let line: ScenarioLine? = lines.indices.contains(lineIndex) ? lines[lineIndex] : nil
    diagnostics.append(
      Diagnostic(
        source: source,
        location: SourceLocation(line: line?.number ?? 1, column: line?.column(offset) ?? 1),
        message: message, lineText: line?.text ?? ""))
  }
}

/// A part of the parser: reads the shared lines, reports into the shared diagnostics.
protocol ScenarioParsePart {
  var session: ScenarioParse { get }
}

extension ScenarioParsePart {
  var lines: [ScenarioLine] { session.lines }
  var source: String { session.source }

  func error(_ lineIndex: Int, _ offset: Int, _ message: String) { session.error(lineIndex, offset, message) }

  func error(_ lineIndex: Int, _ token: ScenarioToken, _ message: String) {
    session.error(lineIndex, token.start, message)
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
  func missing(_ lineIndex: Int, _ message: String) {
    error(lineIndex, lines[lineIndex].endOfContent, message)
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
