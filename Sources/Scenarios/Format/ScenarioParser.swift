import Replica
import Simulator

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
    var state = _ScenarioParse(source: source, text: text)
    return state.run()
  }

  /// The name a scenario gets from its file: `scenarios/x.scenario` → `x`.
  public static func defaultName(forSource source: String) -> String {
    var base = Substring(source)
    if let slash = base.lastIndex(where: { $0 == "/" || $0 == "\\" }) { base = base[base.index(after: slash)...] }
    if base.hasSuffix(".scenario") { base = base.dropLast(".scenario".count) }
    return String(base)
  }
}

/// The parser's working state: filled by passes over the lexed lines (declarations, then record
/// creations, then timeline and expectations), then turned into a ``ScenarioFile``.
struct _ScenarioParse {
  let source: String
  var lines: [ScenarioLine]
  var diagnostics: [Diagnostic] = []

  /// Line number of the first `at` line: header statements must come before it.
  var firstAtLine: Int?
  /// Header keyword → the line it was first given on.
  var headerLines: [String: Int] = [:]

  var name: String?
  var about: String?
  var devices: [String] = []
  /// Every device name written in a `devices` line, valid or not (so that a bad name is
  /// reported once, not at every use).
  var knownDevices: Set<String> = []
  var policy: PolicySpec?
  var policyLocation: SourceLocation?
  var seed: UInt64 = 1
  var latency: LatencyModel = .uniform(.milliseconds(20), .milliseconds(300))
  var loss: Probability = .never
  var duplicate: Probability = .never
  var clocks: [ClockSetting] = []
  var clockLines: [String: Int] = [:]
  var retention: SimDuration?
  var autosync: SimDuration? = .seconds(1)
  var push: PushSetting = .on
  var deployed: [String]?

  var types: [RecordType] = []
  var typeLines: [String: Int] = [:]
  /// `Type.field` → line, for duplicate fields.
  var fieldLines: [String: Int] = [:]
  /// Type → fields whose line was wrong (reported there; uses of them are not reported again).
  var brokenFields: [String: [String]] = [:]

  /// Names checked once every declaration is known: (name, line index, offset).
  var pendingTypeUses: [(String, Int, Int)] = []
  var pendingDeviceUses: [(String, Int, Int)] = []

  /// Record id → its type and the line of its `create`.
  var creates: [String: (type: String, line: Int)] = [:]
  /// Created ids in file order (for suggestions).
  var createdIDs: [String] = []

  /// Parsed timeline entries with their file order.
  var entries: [(entry: TimelineEntry, order: Int, timeOffset: Int, lineIndex: Int)] = []
  /// Every settle in file order: line index, whether it stands alone, and its time when it is
  /// `at T settle` with a valid time.
  var settles: [(lineIndex: Int, standalone: Bool, time: SimDuration?)] = []
  var expectations: [Expectation] = []

  init(source: String, text: String) {
    self.source = source
    self.lines = ScenarioLexer.lines(text)
  }

  // MARK: - Passes

  mutating func run() -> Result<ScenarioFile, ScenarioErrors> {
    for i in lines.indices {
      if let problem = ScenarioLexer.lex(&lines[i]) { error(i, problem.offset, problem.message) }
    }
    firstAtLine = lines.first { !$0.indented && $0.tokens.first?.is("at") == true }?.number
    declarationPass()
    checkDeclaredNames()
    collectCreates()
    timelinePass()
    checkSettles()
    return finish()
  }

  /// Header statements, types and their fields.
  mutating func declarationPass() {
    var inType = false
    var currentType: Int?
    for i in lines.indices {
      let line = lines[i]
      if line.tokens.isEmpty && !line.lexFailed { continue }
      if line.indented {
        if line.lexFailed { continue }
        if inType {
          parseField(i, into: currentType)
        } else {
          // Reported once; the rest of the block is checked but declares nothing.
          reportStrayIndentedLine(i)
          inType = true
        }
        continue
      }
      inType = false
      currentType = nil
      guard let head = line.tokens.first, head.isWord else { continue }
      if line.lexFailed {
        inType = head.text == "type"
        continue
      }
      if head.text == "type" {
        inType = true
        currentType = parseType(i)
      } else if Self.headerKeywords.contains(head.text) {
        parseHeader(i, keyword: head.text)
      }
    }
  }

  /// Type and device names used before (or without) their declaration.
  mutating func checkDeclaredNames() {
    for (name, i, offset) in pendingTypeUses where typeLines[name] == nil {
      error(i, offset, "unknown type '\(Self.quoted(name))'" + didYouMean(name, types.map(\.name), else: typeListHint))
    }
    for (name, i, offset) in pendingDeviceUses where !knownDevices.contains(name) {
      error(i, offset, unknownDeviceMessage(name))
    }
    if headerLines["devices"] == nil {
      error(0, 0, "no devices: add a 'devices' line, as in 'devices iPad phone'")
    }
  }

  /// Every `at T DEVICE create TYPE ID` line, so that records can be used before their
  /// creation line in the file.
  mutating func collectCreates() {
    for i in lines.indices {
      let line = lines[i]
      let t = line.tokens
      guard !line.indented, !line.lexFailed, t.count >= 6, t[0].is("at"), t[3].is("create"), t[5].isWord,
        Self.isIdentifier(t[5].text)
      else { continue }
      let id = t[5].text
      if let prior = creates[id] {
        error(i, t[5].start, "record '\(id)' is already created on line \(prior.line); each id is created once")
      } else {
        creates[id] = (t[4].text, line.number)
        createdIDs.append(id)
      }
    }
  }

  /// `at` lines, `expect` lines, standalone `settle`, and anything unknown.
  mutating func timelinePass() {
    for i in lines.indices {
      let line = lines[i]
      guard !line.indented, !line.lexFailed, let head = line.tokens.first else { continue }
      guard head.isWord else {
        error(i, head.start, "expected a statement, found a string; statements start with a keyword such as 'at' or 'expect'")
        continue
      }
      switch head.text {
      case "at": parseAt(i)
      case "expect": parseExpect(i)
      case "settle": parseStandaloneSettle(i)
      case "type": continue
      case _ where Self.headerKeywords.contains(head.text): continue
      default: reportUnknownStatement(i, head)
      }
    }
  }

  /// At most one settle; nothing after it.
  mutating func checkSettles() {
    guard let first = settles.first else { return }
    for extra in settles.dropFirst() {
      error(extra.lineIndex, lines[extra.lineIndex].tokens.first { $0.is("settle") }?.start ?? 0,
        "a second 'settle': a file has at most one (the first is on line \(lines[first.lineIndex].number))")
    }
    let settleLine = lines[first.lineIndex].number
    if !first.standalone {
      // `at T settle` with a bad time has been reported; nothing to compare with.
      guard let settleTime = first.time else { return }
      for e in entries where e.entry.time > settleTime && e.entry.action != .settle {
        error(e.lineIndex, e.timeOffset,
          "this line is at \(e.entry.time), after 'settle' at \(settleTime) (line \(settleLine)); settle ends the timeline")
      }
    } else {
      for e in entries where lines[e.lineIndex].number > settleLine {
        error(e.lineIndex, 0,
          "'at' line after 'settle' (line \(settleLine)); the timeline comes before a standalone settle")
      }
    }
  }

  mutating func finish() -> Result<ScenarioFile, ScenarioErrors> {
    if !diagnostics.isEmpty {
      let sorted = diagnostics.enumerated().sorted {
        ($0.element.location.line, $0.element.location.column, $0.offset)
          < ($1.element.location.line, $1.element.location.column, $1.offset)
      }.map(\.element)
      let kept = Array(sorted.prefix(ScenarioErrors.limit))
      return .failure(ScenarioErrors(diagnostics: kept, source: source, omitted: sorted.count - kept.count))
    }
    let timeline = entries.sorted {
      ($0.entry.time, $0.entry.action == .settle ? 1 : 0, $0.order) < ($1.entry.time, $1.entry.action == .settle ? 1 : 0, $1.order)
    }.map(\.entry)
    return .success(ScenarioFile(
      source: source, name: name ?? ScenarioParser.defaultName(forSource: source), about: about, devices: devices,
      policy: policy ?? Self.defaultPolicy, policyLocation: policyLocation, seed: seed, latency: latency, loss: loss,
      duplicate: duplicate, clocks: clocks, retention: retention, autosync: autosync, push: push,
      schema: Schema(types: types, deployed: deployed), timeline: timeline, expectations: expectations))
  }

  // MARK: - Reporting

  /// Reports a problem at a scalar offset of line `lineIndex`.
  mutating func error(_ lineIndex: Int, _ offset: Int, _ message: String) {
    let line: ScenarioLine? = lines.indices.contains(lineIndex) ? lines[lineIndex] : nil
    diagnostics.append(Diagnostic(
      source: source,
      location: SourceLocation(line: line?.number ?? 1, column: line?.column(offset) ?? 1),
      message: message, lineText: line?.text ?? ""))
  }

  mutating func error(_ lineIndex: Int, _ token: ScenarioToken, _ message: String) {
    error(lineIndex, token.start, message)
  }

  /// Reports `unexpected 'X'` at the first token after `index`, if there is one; returns
  /// whether the line ended there.
  @discardableResult
  mutating func expectEnd(_ lineIndex: Int, after index: Int, usage: String) -> Bool {
    let t = lines[lineIndex].tokens
    guard index + 1 < t.count else { return true }
    error(lineIndex, t[index + 1], "unexpected \(Self.shown(t[index + 1])); write '\(usage)'")
    return false
  }

  /// Reports that something is missing at the end of the line.
  mutating func missing(_ lineIndex: Int, _ message: String) {
    error(lineIndex, lines[lineIndex].endOfContent, message)
  }

  var typeListHint: String {
    if types.isEmpty { return "; declare it with a 'type' line" }
    return types.count <= 10 ? "; the types are " + types.map(\.name).joined(separator: ", ") : ""
  }

  func unknownDeviceMessage(_ name: String) -> String {
    let hint: String
    if devices.isEmpty {
      hint = "; declare devices with a 'devices' line"
    } else if devices.count <= 10 {
      hint = "; the devices are " + devices.joined(separator: ", ")
    } else {
      hint = ""
    }
    return "unknown device '\(Self.quoted(name))'" + didYouMean(name, devices, else: hint)
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

  static var defaultPolicy: PolicySpec {
    switch PolicySpec.parse("cloudkit-default") {
    case .success(let spec): return spec
    case .failure: preconditionFailure("the cloudkit-default preset is missing")
    }
  }
}
