import Replica
@_spi(Kernel) import Simulator

/// The header statements and the schema: what every timeline line is checked against.
struct DeclarationParser: ScenarioParsePart {
  let session: ScenarioParse

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
  /// `bandwidth` lines, and where each was given (by device name; "" for the world's).
  var bandwidth: [BandwidthSetting] = []
  var bandwidthLines: [String: Int] = [:]
  var clockLines: [String: Int] = [:]
  var retention: SimDuration?
  var autosync: SimDuration? = .seconds(1)
  var push: PushSetting = .on
  /// `quota`, `throttle`, `zone`, `limits`.
  var server = ServerConditions()
  /// `account` lines.
  var accounts: [AccountSetting] = []
  /// Their names, and the account each listed device is in (lookups only, never iterated: a
  /// file may declare many accounts, and each line and `sign-in` asks).
  var accountNames: Set<String> = []
  var accountOfDevice: [String: String] = [:]
  var deployed: [String]?
  /// The line of the `deployed` statement.
  var deployedLine: Int?

  var types: [RecordType] = []
  /// `app-version` lines.
  var appVersions: [AppVersionSetting] = []
  /// Their versions, checked against the schema once it is known: (version, line index, offset).
  var pendingVersions: [(Int, Int, Int)] = []
  /// `schema from PATH`: the path as written.
  var schemaSource: String?
  /// The types `schema from` read and the importer's findings about the model.
  var schemaImport: SchemaImport?
  var typeLines: [String: Int] = [:]
  /// `Type.field` → line, for duplicate fields.
  var fieldLines: [String: Int] = [:]
  /// Type → fields whose line was wrong (reported there; uses of them are not reported again).
  var brokenFields: [String: [String]] = [:]

  /// Names checked once every declaration is known: (name, line index, offset).
  var pendingTypeUses: [(String, Int, Int)] = []
  var pendingDeviceUses: [(String, Int, Int)] = []
  /// `unique-by` lists, resolved once the type's fields are known: (type, names with offsets, line index).
  var pendingUniqueKeys: [(Int, [(String, Int)], Int)] = []

  init(session: ScenarioParse) {
    self.session = session
  }

  mutating func run() {
    firstAtLine = lines.first { !$0.indented && $0.tokens.first?.is("at") == true }?.number
    declarationPass()
    resolveUniqueKeys()
    checkDeclaredNames()
    let latest = Schema(types: types).latestVersion
    for (n, i, offset) in pendingVersions where n > latest {
      error(i, offset, "app version \(n) is newer than the schema, whose latest version is \(latest) (the largest 'since')")
    }
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

  static var defaultPolicy: PolicySpec {
    switch PolicySpec.parse("cloudkit-default") {
    case .success(let spec): return spec
    case .failure: preconditionFailure("the cloudkit-default preset is missing")
    }
  }
}
