@_spi(Kernel) import Simulator

/// A parsed policy spec: a preset plus overrides, e.g. `field-lww-hlc delete=tombstone retention=30d`.
public struct PolicySpec: Hashable, Sendable, CustomStringConvertible {
  /// The preset's name, e.g. `field-lww-hlc`.
  public var preset: String
  /// The `key=value` overrides in the order written; each key at most once.
  public var overrides: [(key: String, value: String)]
  /// The axes in force: the preset's settings with the overrides applied.
  public var settings: PolicySettings

  public static func == (a: PolicySpec, b: PolicySpec) -> Bool {
    a.preset == b.preset && a.settings == b.settings && a.overrides.map(\.key) == b.overrides.map(\.key)
      && a.overrides.map(\.value) == b.overrides.map(\.value)
  }
  public func hash(into h: inout Hasher) { h.combine(description) }

  /// The canonical spelling: the preset, then the overrides in the order given.
  public var description: String {
    ([preset] + overrides.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
  }

  /// Why a spec did not parse; `offset` is the 0-based character offset of the bad word.
  public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, naming the bad word and listing the valid presets, keys or values.
    public var message: String
    /// The 0-based character offset of the bad word in the spec text.
    public var offset: Int
    public var description: String { message }
  }

  /// The override keys a spec accepts, in the order of `policies.md`.
  public static let keys = [
    "granularity", "winner", "save", "delete", "retention", "refetch", "conflict", "text", "outbox", "unit", "token", "batch",
    "retry", "retry-after", "split", "zone-deleted", "account", "unique", "references", "orphans", "order", "unknown-fields",
    "permission-failure", "access-ended", "fetched-read-only", "fetched-shared", "own-fetched", "shared-fetch", "share-root",
    "asset-file", "fetched-assets", "asset-merge",
  ]

  /// Parses a spec. Errors name the unknown preset, key or value and list the valid ones.
  public static func parse(_ text: String) -> Result<PolicySpec, ParseError> {
    let words = _words(text)
    guard let (presetName, presetOffset) = words.first else {
      return .failure(ParseError(message: "expected a policy preset; one of: \(PolicyPreset.all.map(\.name).joined(separator: ", "))", offset: 0))
    }
    guard let preset = PolicyPreset.named(presetName) else {
      let names = PolicyPreset.all.map(\.name)
      let hint = closest(presetName, names).map { "; did you mean '\($0)'?" } ?? "; one of: \(names.joined(separator: ", "))"
      if presetName.contains("=") {
        return .failure(
          ParseError(message: "a policy starts with a preset before any key=value; one of: \(names.joined(separator: ", "))", offset: presetOffset))
      }
      return .failure(ParseError(message: "unknown policy preset '\(presetName)'\(hint)", offset: presetOffset))
    }
    var spec = PolicySpec(preset: preset.name, overrides: [], settings: preset.settings)
    var seen: [String] = []
    for (word, offset) in words.dropFirst() {
      guard let eq = word.firstIndex(of: "=") else {
        return .failure(
          ParseError(message: "expected key=value after the preset, found '\(word)'; keys: \(keys.joined(separator: ", "))", offset: offset))
      }
      let key = String(word[..<eq])
      let value = String(word[word.index(after: eq)...])
      guard keys.contains(key) else {
        let hint = closest(key, keys).map { "; did you mean '\($0)'?" } ?? "; keys: \(keys.joined(separator: ", "))"
        return .failure(ParseError(message: "unknown policy key '\(key)'\(hint)", offset: offset))
      }
      if seen.contains(key) {
        return .failure(ParseError(message: "policy key '\(key)' given twice", offset: offset))
      }
      seen.append(key)
      let valueOffset = offset + key.count + 1
      if let message = spec.settings._set(key, value) {
        return .failure(ParseError(message: message, offset: valueOffset))
      }
      spec.overrides.append((key, value))
    }
    return .success(spec)
  }

  /// The shortest spec whose settings are `settings`: the preset that needs the fewest overrides
  /// (the first in `sim-cli policies` order on a tie; planted bugs only when nothing else is as
  /// close), then those overrides in the order of `policies.md`. How a custom policy's axes are
  /// written into a scenario's `policy` line.
  ///
  ///     PolicySpec.closest(to: PreferLongerTitle().settings).description   // "field-lww-hlc"
  public static func closest(to settings: PolicySettings) -> PolicySpec {
    let wanted = settings.pairs
    func differences(_ preset: PolicyPreset) -> [(key: String, value: String)] {
      zip(preset.settings.pairs, wanted).filter { $0.0.value != $0.1.value }.map { $0.1 }
    }
    let ranked = PolicyPreset.all.enumerated().map { (offset, preset) in
      (preset: preset, overrides: differences(preset), rank: (differences(preset).count, preset.plantedBug ? 1 : 0, offset))
    }
    let best = ranked.min { $0.rank < $1.rank }!
    return PolicySpec(preset: best.preset.name, overrides: best.overrides, settings: settings)
  }

  static func _words(_ text: String) -> [(String, Int)] {
    var result: [(String, Int)] = []
    var current = ""
    var start = 0
    for (i, ch) in text.enumerated() {
      if ch == " " || ch == "\t" {
        if !current.isEmpty { result.append((current, start)) }
        current = ""
      } else {
        if current.isEmpty { start = i }
        current.append(ch)
      }
    }
    if !current.isEmpty { result.append((current, start)) }
    return result
  }

  static func closest(_ word: String, _ candidates: [String]) -> String? {
    Suggestion.closest(to: word, in: candidates)
  }
}

extension PolicySettings {
  /// Sets one axis from text; returns an error message, or nil.
  package mutating func _set(_ key: String, _ value: String) -> String? {
    func pick<E: RawRepresentable & CaseIterable>(_ type: E.Type, _ apply: (E) -> Void) -> String? where E.RawValue == String {
      if let v = E(rawValue: value) {
        apply(v)
        return nil
      }
      let valid = E.allCases.map(\.rawValue)
      let hint = PolicySpec.closest(value, valid).map { "; did you mean '\($0)'?" } ?? ""
      return "invalid value '\(value)' for policy key '\(key)'; valid: \(valid.joined(separator: ", "))\(hint)"
    }
    switch key {
    case "granularity": return pick(Granularity.self) { granularity = $0 }
    case "winner": return pick(Winner.self) { winner = $0 }
    case "save": return pick(Save.self) { save = $0 }
    case "delete": return pick(Delete.self) { delete = $0 }
    case "refetch": return pick(Refetch.self) { refetch = $0 }
    case "conflict": return pick(Conflict.self) { conflict = $0 }
    case "text": return pick(Text.self) { text = $0 }
    case "outbox": return pick(Outbox.self) { outbox = $0 }
    case "unit": return pick(Unit.self) { unit = $0 }
    case "token": return pick(Token.self) { token = $0 }
    case "retry": return pick(Retry.self) { retry = $0 }
    case "retry-after": return pick(RetryAfter.self) { retryAfter = $0 }
    case "split": return pick(Split.self) { split = $0 }
    case "zone-deleted": return pick(ZoneDeleted.self) { zoneDeleted = $0 }
    case "account": return pick(Account.self) { account = $0 }
    case "unique": return pick(Unique.self) { unique = $0 }
    case "references": return pick(References.self) { references = $0 }
    case "orphans": return pick(Orphans.self) { orphans = $0 }
    case "order": return pick(Order.self) { order = $0 }
    case "unknown-fields": return pick(UnknownFields.self) { unknownFields = $0 }
    case "permission-failure": return pick(PermissionFailure.self) { permissionFailure = $0 }
    case "access-ended": return pick(AccessEnded.self) { accessEnded = $0 }
    case "fetched-read-only": return pick(FetchedReadOnly.self) { fetchedReadOnly = $0 }
    case "fetched-shared": return pick(FetchedShared.self) { fetchedShared = $0 }
    case "own-fetched": return pick(OwnFetched.self) { ownFetched = $0 }
    case "shared-fetch": return pick(SharedFetch.self) { sharedFetch = $0 }
    case "share-root": return pick(ShareRoot.self) { shareRoot = $0 }
    case "asset-file": return pick(AssetFile.self) { assetFile = $0 }
    case "fetched-assets": return pick(FetchedAssets.self) { fetchedAssets = $0 }
    case "asset-merge": return pick(AssetMerge.self) { assetMerge = $0 }
    case "retention":
      switch SimDuration.parse(value) {
      case .success(let d) where d > .zero:
        retention = d
        return nil
      case .success:
        return "retention must be longer than zero"
      case .failure(let e):
        return "invalid retention '\(value)': \(e.message)"
      }
    case "batch":
      guard let n = Int(value), n >= 1, n <= 10_000 else {
        return "invalid value '\(value)' for policy key 'batch'; expected a whole number from 1 to 10000"
      }
      batch = n
      return nil
    default:
      return "unknown policy key '\(key)'"
    }
  }
}
