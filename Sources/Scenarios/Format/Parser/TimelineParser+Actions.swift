import Replica
@_spi(Kernel) import Simulator

/// `at TIME ACTION` lines, standalone `settle`, and unknown statements.
extension TimelineParser {
  static let deviceActions = [
    "create", "set", "append", "replace", "delete", "sync", "send", "fetch", "kill", "background", "clock", "delete-zone", "purge-zone",
    "sign-out", "sign-in", "switch-account", "upgrade", "share", "invite", "accept", "leave", "unshare", "permission", "remove",
    "delete-file", "change-file", "purge-staging",
  ]
  static let deviceActionList =
    "create, set, append, replace, delete, sync, send, fetch, kill, background, clock, delete-zone, purge-zone, sign-out, sign-in, switch-account, upgrade, share, invite, accept, leave, unshare, permission, remove, delete-file, change-file or purge-staging"

  mutating func reportUnknownStatement(_ i: Int, _ head: ScenarioToken) {
    let word = head.text
    if knownDevices.contains(word) {
      error(i, head, "unknown statement '\(word)'; a timeline line starts with 'at TIME', as in 'at 1s \(word) sync'")
      return
    }
    error(i, head, "unknown statement '\(Self.quoted(word))'" + didYouMean(word, Self.statementKeywords))
  }

  mutating func parseStandaloneSettle(_ i: Int) {
    guard expectEnd(i, after: 0, usage: "settle") else { return }
    settles.append((i, true, nil))
  }

  mutating func parseAt(_ i: Int) {
    let line = lines[i]
    let t = line.tokens
    guard t.count >= 2 else {
      return missing(i, "expected a time after 'at', as in 'at 1.5s iPad sync'")
    }
    let time: SimDuration? = value(i, word(t[1]).flatMap { Self.boundedDuration($0, at: t[1].start, allowSign: false, what: "time") })
    guard t.count >= 3 else {
      return missing(
        i, "expected an action after the time: a device's action, sync, offline, online, server, free, reject, encrypted-data-reset or settle")
    }
    guard let action = parseAction(i) else { return }
    if action == .settle { settles.append((i, false, time)) }
    guard let time else { return }
    entries.append((TimelineEntry(time: time, action: action, location: location(i, t[0])), entries.count, t[1].start, i))
  }

  /// The action after `at TIME` (tokens from index 2).
  mutating func parseAction(_ i: Int) -> TimelineAction? {
    let t = lines[i].tokens
    let head = t[2]
    guard head.isWord else {
      error(i, head, "expected an action after the time, found a string")
      return nil
    }
    switch head.text {
    case "sync":
      guard expectEnd(i, after: 2, usage: "at TIME sync") else { return nil }
      return .syncAll
    case "settle":
      guard expectEnd(i, after: 2, usage: "at TIME settle") else { return nil }
      return .settle
    case "offline", "online":
      guard let names = deviceList(i, from: 3, after: head.text) else { return nil }
      return head.text == "offline" ? .offline(names) : .online(names)
    case "server":
      guard t.count >= 4 else {
        missing(i, "expected 'down' or 'up' after 'server'")
        return nil
      }
      guard t[3].is("down") || t[3].is("up") else {
        error(i, t[3], "expected 'down' or 'up' after 'server'" + didYouMean(t[3].text, ["down", "up"]))
        return nil
      }
      guard expectEnd(i, after: 3, usage: "at TIME server \(t[3].text)") else { return nil }
      return t[3].text == "down" ? .serverDown : .serverUp
    case "free":
      guard t.count >= 4 else {
        missing(i, "expected how much iCloud storage the user frees, as in 'free 100KB'")
        return nil
      }
      guard t[3].isWord else {
        error(i, t[3], "expected a size such as 500B, 250KB, 2MB or 1.5GB, not a string")
        return nil
      }
      switch ByteCount.parse(t[3].text) {
      case .failure(let e):
        error(i, t[3], e.message)
        return nil
      case .success(let bytes):
        guard expectEnd(i, after: 3, usage: "at TIME free SIZE") else { return nil }
        return .free(bytes: bytes)
      }
    case "reject":
      return parseReject(i)
    case "encrypted-data-reset":
      guard expectEnd(i, after: 2, usage: "at TIME encrypted-data-reset") else { return nil }
      return .encryptedDataReset
    default:
      return parseDeviceAction(i)
    }
  }

  /// `reject ID... with ERROR [retry-after D] for D`
  mutating func parseReject(_ i: Int) -> TimelineAction? {
    let t = lines[i].tokens
    let usage = "at TIME reject ID... with ERROR [retry-after D] for D"
    let errors = CloudKitError.perRecord.map(\.rawValue)
    var ids: [String] = []
    var k = 3
    var ok = true
    while k < t.count, !t[k].is("with") {
      if checkName(i, t[k], "record id"), recordType(t[k].text, i, at: t[k].start) != nil {
        if ids.contains(t[k].text) {
          error(i, t[k], "record '\(t[k].text)' is listed twice")
          ok = false
        } else {
          ids.append(t[k].text)
        }
      } else {
        ok = false
      }
      k += 1
    }
    guard !ids.isEmpty || !ok else {
      missing(i, "expected the records whose saves the server refuses; write '\(usage)'")
      return nil
    }
    guard k < t.count else {
      missing(i, "expected 'with ERROR' after the records; write '\(usage)'")
      return nil
    }
    guard k + 1 < t.count else {
      missing(i, "expected a CloudKit error after 'with': \(errors.joined(separator: ", "))")
      return nil
    }
    let errorToken = t[k + 1]
    if errorToken.isWord, let code = CloudKitError(rawValue: errorToken.text), !CloudKitError.perRecord.contains(code) {
      error(
        i, errorToken,
        "\(code) is not an answer for one record (\(code == .limitExceeded ? "a request over the limits gets it: see 'limits'" : "the other records of a failed atomic batch get it: see 'zone atomic'")); a reject line takes one of: \(errors.joined(separator: ", "))"
      )
      return nil
    }
    guard errorToken.isWord, let code = CloudKitError(rawValue: errorToken.text), CloudKitError.perRecord.contains(code) else {
      error(
        i, errorToken,
        "unknown CloudKit error \(Self.shown(errorToken))" + didYouMean(errorToken.text, errors, else: "; one of: \(errors.joined(separator: ", "))"))
      return nil
    }
    k += 2
    var retryAfter: SimDuration?
    if k < t.count, t[k].is("retry-after") {
      guard let d = durationAfter(i, k, what: "retry-after") else { return nil }
      retryAfter = d
      k += 2
    }
    guard k < t.count, t[k].is("for") else {
      if k < t.count {
        error(
          i, t[k], "expected 'for D' (how long the server refuses them)" + didYouMean(t[k].text, ["for", "retry-after"], else: "; write '\(usage)'"))
      } else {
        missing(i, "expected 'for D': how long the server refuses them; write '\(usage)'")
      }
      return nil
    }
    guard let duration = durationAfter(i, k, what: "duration") else { return nil }
    guard duration > .zero else {
      error(i, t[k + 1], "a reject line must last longer than zero")
      return nil
    }
    guard expectEnd(i, after: k + 1, usage: usage), ok else { return nil }
    return .reject(ids: ids, error: code, retryAfter: retryAfter, duration: duration)
  }

  /// The duration after keyword token `k` (`retry-after 30s`, `for 1m`), reported when missing or
  /// bad; `what` names it in messages.
  mutating func durationAfter(_ i: Int, _ k: Int, what: String) -> SimDuration? {
    let t = lines[i].tokens
    guard k + 1 < t.count else {
      missing(i, "expected a duration after '\(t[k].text)', as in '\(t[k].text) 30s'")
      return nil
    }
    guard let text = value(i, word(t[k + 1])) else { return nil }
    return value(i, Self.boundedDuration(text, at: t[k + 1].start, allowSign: false, what: what))
  }

  /// Device names from token `k` on (at least one, each declared, none twice).
  mutating func deviceList(_ i: Int, from k: Int, after keyword: String) -> [String]? {
    let t = lines[i].tokens
    guard k < t.count else {
      missing(i, "expected device names after '\(keyword)', as in '\(keyword) \(devices.prefix(2).joined(separator: " "))'")
      return nil
    }
    var names: [String] = []
    var listed: Set<String> = []
    var ok = true
    for token in t[k...] {
      guard checkName(i, token, "device name") else {
        ok = false
        continue
      }
      if !knownDevices.contains(token.text) {
        error(i, token, unknownDeviceMessage(token.text))
        ok = false
      } else if !listed.insert(token.text).inserted {
        error(i, token, "device '\(token.text)' is listed twice")
        ok = false
      } else {
        names.append(token.text)
      }
    }
    return ok ? names : nil
  }

  /// `DEVICE VERB ...` after the time.
  mutating func parseDeviceAction(_ i: Int) -> TimelineAction? {
    let t = lines[i].tokens
    let deviceToken = t[2]
    let device = deviceToken.text
    let verb: ScenarioToken? = t.count > 3 ? t[3] : nil
    if !knownDevices.contains(device) {
      // A misspelt world event (`at 1s snyc`) or a misspelt device (`at 1s ipad sync`)?
      let verbIsKnown = verb.map { $0.isWord && Self.deviceActions.contains($0.text) } ?? false
      let worldHint = didYouMean(device, Self.worldEvents)
      if !verbIsKnown, verb == nil || didYouMean(device, devices).isEmpty, !worldHint.isEmpty {
        error(i, deviceToken, "unknown action '\(Self.quoted(device))'" + worldHint)
        return nil
      }
      if !Self.isIdentifier(device) && verb == nil {
        error(i, deviceToken, "unknown action '\(Self.quoted(device))'; expected a device name, sync, offline, online, server or settle")
        return nil
      }
      error(i, deviceToken, unknownDeviceMessage(device))
      guard verbIsKnown else { return nil }
    }
    guard let verb else {
      missing(i, "expected an action after '\(device)': \(Self.deviceActionList)")
      return nil
    }
    guard verb.isWord, Self.deviceActions.contains(verb.text) else {
      error(
        i, verb, "unknown action \(Self.shown(verb))" + didYouMean(verb.text, Self.deviceActions, else: "; a device can \(Self.deviceActionList)"))
      return nil
    }
    switch verb.text {
    case "create": return parseCreate(i, device)
    case "set": return parseSet(i, device)
    case "append", "replace": return parseTextEdit(i, device, verb.text)
    case "delete":
      let usage = "DEVICE delete ID"
      guard t.count >= 5 else {
        missing(i, "expected the record to delete; write '\(usage)'")
        return nil
      }
      guard checkName(i, t[4], "record id"), recordType(t[4].text, i, at: t[4].start) != nil else { return nil }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      return .delete(device: device, id: t[4].text)
    case "delete-file", "change-file":
      let usage = "DEVICE \(verb.text) ID.FIELD"
      guard t.count >= 5 else {
        missing(
          i,
          "expected the asset field whose file the app \(verb.text == "delete-file" ? "deletes" : "changes"); write '\(usage)', as in '\(device) \(verb.text) p1.photo'"
        )
        return nil
      }
      guard let target = idAndField(i, t[4], usage: "\(device) \(verb.text) p1.photo") else { return nil }
      guard let type = recordType(target.id, i, at: target.idOffset) else { return nil }
      if let type, let field = field(target.field, of: type, i, at: target.fieldOffset), field.kind != .asset {
        error(i, target.fieldOffset, "\(verb.text) works on asset fields; \(target.field) is \(Self.article(field.kind))")
        return nil
      }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      return .file(device: device, id: target.id, field: target.field, changed: verb.text == "change-file")
    case "purge-staging":
      guard expectEnd(i, after: 3, usage: "DEVICE purge-staging") else { return nil }
      return .purgeStaging(device: device)
    case "sync", "send", "fetch", "kill", "delete-zone", "purge-zone", "sign-out":
      guard expectEnd(i, after: 3, usage: "DEVICE \(verb.text)") else { return nil }
      switch verb.text {
      case "sync": return .sync(device: device)
      case "send": return .send(device: device)
      case "fetch": return .fetch(device: device)
      case "kill": return .kill(device: device)
      case "delete-zone": return .deleteZone(device: device)
      case "sign-out": return .signOut(device: device)
      default: return .purgeZone(device: device)
      }
    case "sign-in", "switch-account":
      let usage = "DEVICE \(verb.text) ACCOUNT"
      // The names are listed only for a message (a file may declare many accounts).
      var names: [String] { declared.accounts.isEmpty ? ["icloud"] : declared.accounts.map(\.name) }
      guard t.count >= 5 else {
        missing(i, "expected the account to sign into; write '\(usage)', as in '\(device) \(verb.text) \(declared.accounts.first?.name ?? "icloud")'")
        return nil
      }
      guard checkName(i, t[4], "account name") else { return nil }
      guard declared.accounts.isEmpty ? t[4].text == "icloud" : declared.accountNames.contains(t[4].text) else {
        error(i, t[4], "unknown account '\(t[4].text)'" + didYouMean(t[4].text, names, else: "; accounts: \(names.joined(separator: ", "))"))
        return nil
      }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      return .signIn(device: device, account: t[4].text, switch: verb.text == "switch-account")
    case "share", "invite", "accept", "leave", "unshare", "permission", "remove":
      return parseShareStatement(i, device, verb.text).map { .sharing(device: device, $0) }
    case "upgrade":
      let usage = "DEVICE upgrade N"
      guard t.count >= 5 else {
        missing(i, "expected the app version to upgrade to; write '\(usage)', as in '\(device) upgrade 2'")
        return nil
      }
      guard t[4].isWord, let n = Int(t[4].text), (1...1000).contains(n) else {
        error(i, t[4], "expected an app version from 1 to 1000 after 'upgrade'")
        return nil
      }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      return .upgrade(device: device, version: n)
    case "background":
      let usage = "DEVICE background D"
      guard t.count >= 5 else {
        missing(i, "expected the background time budget, as in 'background 30s'")
        return nil
      }
      guard let text = value(i, word(t[4])), let d = value(i, Self.duration(text, at: t[4].start)) else { return nil }
      guard d > .zero else {
        error(i, t[4], "a background budget must be longer than zero")
        return nil
      }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      return .background(device: device, budget: d)
    case "clock":
      let usage = "DEVICE clock ±D"
      guard t.count >= 5 else {
        missing(i, "expected the clock jump, as in 'clock +2s' or 'clock -500ms'")
        return nil
      }
      guard let text = value(i, word(t[4])),
        let d = value(i, Self.boundedDuration(text, at: t[4].start, allowSign: true, what: "clock jump"))
      else { return nil }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      return .clockJump(device: device, by: d)
    default:
      return nil
    }
  }

  mutating func parseCreate(_ i: Int, _ device: String) -> TimelineAction? {
    let t = lines[i].tokens
    guard t.count >= 5 else {
      missing(i, "expected the type and id of the new record; write 'DEVICE create TYPE ID [field=VALUE ...]'")
      return nil
    }
    guard checkName(i, t[4], "type name") else { return nil }
    let typeName = t[4].text
    let type = typeLines[typeName] == nil ? nil : types.first { $0.name == typeName }
    var ok = true
    if type == nil {
      error(i, t[4], "unknown type '\(Self.quoted(typeName))'" + didYouMean(typeName, types.map(\.name), else: typeListHint))
      ok = false
    }
    guard t.count >= 6 else {
      missing(i, "expected the new record's id, as in 'create \(typeName) n1'")
      return nil
    }
    guard checkName(i, t[5], "record id") else { return nil }
    // `in ZONE`: the record's zone (a field assignment always has an '=').
    var first = 6
    if t.count > 6, t[6].isWord, t[6].text == "in" {
      guard t.count > 7 else {
        missing(i, "expected the zone's name after 'in'; write 'DEVICE create TYPE ID in ZONE [field=VALUE ...]'")
        return nil
      }
      guard checkName(i, t[7], "zone name") else { return nil }
      recordZones[t[5].text] = t[7].text
      if !zoneDeclarations.contains(t[7].text) { zoneDeclarations.append(t[7].text) }
      first = 8
    }
    let fields = assignments(i, from: first, of: type)
    guard ok, let fields else { return nil }
    return .create(device: device, type: typeName, id: t[5].text, fields: fields)
  }

  mutating func parseSet(_ i: Int, _ device: String) -> TimelineAction? {
    let t = lines[i].tokens
    let usage = "DEVICE set ID field=VALUE ..."
    guard t.count >= 5 else {
      missing(i, "expected the record to change; write '\(usage)'")
      return nil
    }
    guard checkName(i, t[4], "record id"), let type = recordType(t[4].text, i, at: t[4].start) else { return nil }
    if let type, type.appendOnly {
      error(i, t[3], appendOnlyMessage(type.name))
      return nil
    }
    guard t.count >= 6 else {
      missing(i, "expected at least one field=VALUE after 'set \(t[4].text)'")
      return nil
    }
    guard let type, let fields = assignments(i, from: 5, of: type) else { return nil }
    return .set(device: device, id: t[4].text, fields: fields)
  }

  func appendOnlyMessage(_ type: String) -> String {
    "\(type) is append-only: its records are created once and never updated"
  }

  /// `append ID.field "text"` and `replace ID.field "old" "new"`.
  mutating func parseTextEdit(_ i: Int, _ device: String, _ verb: String) -> TimelineAction? {
    let t = lines[i].tokens
    let usage = verb == "append" ? "DEVICE append ID.field \"text\"" : "DEVICE replace ID.field \"old\" \"new\""
    let example = verb == "append" ? "append n1.body \" more\"" : "replace n1.body \"teh\" \"the\""
    guard t.count >= 5 else {
      missing(i, "expected ID.field after '\(verb)'; write '\(usage)'")
      return nil
    }
    guard let target = idAndField(i, t[4], usage: example) else { return nil }
    var ok = true
    if let type = recordType(target.id, i, at: target.idOffset) {
      if let type {
        if type.appendOnly {
          error(i, t[3], appendOnlyMessage(type.name))
          ok = false
        } else if let field = field(target.field, of: type, i, at: target.fieldOffset), field.kind != .text {
          error(i, target.fieldOffset, "\(verb) works on text fields; \(target.field) is \(Self.article(field.kind))")
          ok = false
        }
      }
    } else {
      ok = false
    }
    let strings = verb == "append" ? 1 : 2
    for k in 5..<(5 + strings) {
      guard k < t.count else {
        missing(i, "expected a \"string\" here; write '\(usage)'")
        return nil
      }
      guard t[k].isString else {
        error(i, t[k], "expected a \"string\"; write '\(usage)'")
        return nil
      }
    }
    guard expectEnd(i, after: 4 + strings, usage: usage) else { return nil }
    if verb == "replace", t[5].text.isEmpty {
      error(i, t[5], "replace needs the text to find; it cannot be empty")
      return nil
    }
    guard ok else { return nil }
    return verb == "append"
      ? .append(device: device, id: target.id, field: target.field, text: t[5].text)
      : .replace(device: device, id: target.id, field: target.field, old: t[5].text, new: t[6].text)
  }

  static func article(_ kind: FieldKind) -> String {
    switch kind {
    case .int: "an int"
    case .text: "text"
    case .ref(let type): "a ref to \(type)"
    default: "a \(kind)"
    }
  }

  /// `field=VALUE ...` from token `k` on; fields are checked against `type` when it is known.
  mutating func assignments(_ i: Int, from k: Int, of type: RecordType?) -> [Assignment]? {
    let t = lines[i].tokens
    var result: [Assignment] = []
    var assigned: Set<String> = []
    var ok = true
    var index = k
    while index < t.count {
      let token = t[index]
      index += 1
      let scalars = token.text.unicodeScalars
      guard token.isWord, let eqIndex = scalars.firstIndex(of: "=") else {
        error(i, token, "expected field=VALUE, found \(Self.shown(token))")
        ok = false
        continue
      }
      let eq = scalars.distance(from: scalars.startIndex, to: eqIndex)
      let name = String(scalars[..<eqIndex])
      var valueText = String(scalars[scalars.index(after: eqIndex)...])
      var valueIsString = false
      var valueOffset = token.start + eq + 1
      if valueText.isEmpty {
        guard index < t.count, t[index].isString, t[index].glued else {
          error(i, token.end, "expected a value right after '=', as in \(Self.quoted(name))=\"…\"")
          ok = false
          // `title= "x"`: the string was meant as the value; do not report it again.
          if index < t.count, t[index].isString { index += 1 }
          continue
        }
        valueText = t[index].text
        valueIsString = true
        valueOffset = t[index].start
        index += 1
      }
      guard Self.isIdentifier(name) else {
        error(i, token, "expected field=VALUE; '\(Self.quoted(name))' is not a field name")
        ok = false
        continue
      }
      let location = SourceLocation(line: lines[i].number, column: lines[i].column(token.start))
      guard assigned.insert(name).inserted else {
        error(i, token, "\(name) is assigned twice")
        ok = false
        continue
      }
      let read: Result<Literal, _WordError>
      if !valueIsString, valueText.count > 6, valueText.hasPrefix("asset(") || valueText.hasPrefix("bytes(") {
        // `asset(IMG, 3MB)`: a name without quotes.
        error(
          i, valueOffset + 6,
          "expected the content's name in quotes right after '\(valueText.prefix(6))'; write \(valueText.hasPrefix("asset(") ? "asset(\"IMG_0042.heic\", 3MB)" : "bytes(\"body-v3\", 1.2MB)")"
        )
        ok = false
        while index < t.count, !(t[index - 1].isWord && t[index - 1].text.hasSuffix(")")) { index += 1 }
        continue
      }
      if !valueIsString, valueText == "asset(" || valueText == "bytes(" {
        let content = Self.contentLiteral(valueText, at: valueOffset, tokens: t, from: index)
        read = content.0
        index = content.next
      } else {
        read = Self.literal(valueText, isString: valueIsString, at: valueOffset)
      }
      guard let literal = value(i, read) else {
        ok = false
        continue
      }
      if let type {
        guard let field = field(name, of: type, i, at: token.start) else {
          ok = false
          continue
        }
        if !checkFits(literal, field, i, at: valueOffset) { ok = false }
      }
      result.append(Assignment(field: name, value: literal, location: location))
    }
    return ok ? result : nil
  }
}

extension TimelineParser {
  static let permissions = SharePermission.allCases.map(\.rawValue)

  /// `DEVICE share S`, `invite ACCOUNT to S [PERMISSION]`, `accept S`, `leave S`, `unshare S`,
  /// `permission S ACCOUNT PERMISSION`, `remove ACCOUNT from S` (tokens from index 3). A share's
  /// name is checked against the `share` lines once the timeline is read.
  mutating func parseShareStatement(_ i: Int, _ device: String, _ verb: String) -> ShareStatement? {
    let t = lines[i].tokens
    func shareName(at k: Int, usage: String) -> String? {
      guard t.count > k else {
        missing(i, "expected the share's name; write '\(usage)'")
        return nil
      }
      guard checkName(i, t[k], "share name") else { return nil }
      shareUses.append((i, t[k]))
      return t[k].text
    }
    func accountName(at k: Int, usage: String) -> String? {
      var names: [String] { declared.accounts.isEmpty ? ["icloud"] : declared.accounts.map(\.name) }
      guard t.count > k else {
        missing(i, "expected an account; write '\(usage)'")
        return nil
      }
      guard checkName(i, t[k], "account name") else { return nil }
      guard declared.accounts.isEmpty ? t[k].text == "icloud" : declared.accountNames.contains(t[k].text) else {
        error(i, t[k], "unknown account '\(t[k].text)'" + didYouMean(t[k].text, names, else: "; accounts: \(names.joined(separator: ", "))"))
        return nil
      }
      return t[k].text
    }
    func permission(at k: Int) -> SharePermission? {
      guard t[k].isWord, let p = SharePermission(rawValue: t[k].text) else {
        let word = t[k].text
        let prefixOf = word.isEmpty ? nil : Self.permissions.first { $0.hasPrefix(word) }
        error(
          i, t[k],
          "expected read-only or read-write, found \(Self.shown(t[k]))"
            + (prefixOf.map { "; did you mean '\($0)'?" } ?? didYouMean(word, Self.permissions)))
        return nil
      }
      return p
    }
    func keyword(_ word: String, at k: Int, usage: String) -> Bool {
      guard t.count > k else {
        missing(i, "expected '\(word)'; write '\(usage)'")
        return false
      }
      guard t[k].isWord, t[k].text == word else {
        error(i, t[k], "expected '\(word)', found \(Self.shown(t[k])); write '\(usage)'")
        return false
      }
      return true
    }
    switch verb {
    case "share" where t.count > 5 && t[5].isWord && t[5].text == "in":
      // `share S in ZONE`: a zone-wide share of a zone some `create … in ZONE` line names.
      let usage = "DEVICE share SHARE [in ZONE | of RECORD]"
      guard let s = shareName(at: 4, usage: usage) else { return nil }
      shareDeclarations.append(s)
      guard t.count > 6 else {
        missing(i, "expected the name of the zone to share; write '\(usage)'")
        return nil
      }
      guard checkName(i, t[6], "zone name"), expectEnd(i, after: 6, usage: usage) else { return nil }
      zoneUses.append((i, t[6]))
      let target = "zone '\(t[6].text)'"
      if let prior = shareRootLines[s], prior.root != target {
        error(i, t[6], "share '\(s)' is of \(prior.root ?? "the app's zone") on line \(prior.line); a share keeps what it shares")
        return nil
      }
      shareRootLines[s] = (target, lines[i].number)
      return .share(s, zone: t[6].text)
    case "share" where t.count > 5:
      // `share S of ID`: a hierarchy share, rooted at a record some line creates.
      let usage = "DEVICE share SHARE [in ZONE | of RECORD]"
      guard let s = shareName(at: 4, usage: usage) else { return nil }
      // (Made here even when the rest of the line is wrong: one error, not another for each use.)
      shareDeclarations.append(s)
      guard keyword("of", at: 5, usage: usage) else { return nil }
      guard t.count > 6 else {
        missing(i, "expected the id of the share's root record; write '\(usage)'")
        return nil
      }
      let root = t[6]
      guard checkName(i, root, "record id"), recordType(root.text, i, at: root.start) != nil, expectEnd(i, after: 6, usage: usage) else {
        return nil
      }
      if let prior = shareRootLines[s], prior.root != "'\(root.text)'" {
        error(i, root, "share '\(s)' is of \(prior.root ?? "the app's zone") on line \(prior.line); a share keeps what it shares")
        return nil
      }
      shareRootLines[s] = ("'\(root.text)'", lines[i].number)
      return .share(s, of: root.text)
    case "share", "accept", "leave", "unshare":
      let usage = verb == "share" ? "DEVICE share SHARE [in ZONE | of RECORD]" : "DEVICE \(verb) SHARE"
      guard let s = shareName(at: 4, usage: usage) else { return nil }
      if verb == "share" { shareDeclarations.append(s) }
      guard expectEnd(i, after: 4, usage: usage) else { return nil }
      switch verb {
      case "share":
        if let prior = shareRootLines[s], let root = prior.root {
          let write = root.hasPrefix("zone ") ? "in " + root.dropFirst(6).dropLast() : "of " + root.dropFirst().dropLast()
          error(i, t[4], "share '\(s)' is of \(root) on line \(prior.line); write 'share \(s) \(write)' (a share keeps what it shares)")
          return nil
        }
        shareRootLines[s] = (nil, lines[i].number)
        return .share(s)
      case "accept": return .accept(s)
      case "leave": return .leave(s)
      default: return .unshare(s)
      }
    case "invite":
      let usage = "DEVICE invite ACCOUNT to SHARE [read-only|read-write]"
      guard let a = accountName(at: 4, usage: usage), keyword("to", at: 5, usage: usage), let s = shareName(at: 6, usage: usage) else { return nil }
      var p = SharePermission.readWrite
      if t.count > 7 {
        guard let given = permission(at: 7) else { return nil }
        p = given
      }
      guard expectEnd(i, after: min(7, t.count - 1), usage: usage) else { return nil }
      return .invite(share: s, account: a, p)
    case "permission":
      let usage = "DEVICE permission SHARE ACCOUNT read-only|read-write"
      guard let s = shareName(at: 4, usage: usage), let a = accountName(at: 5, usage: usage) else { return nil }
      guard t.count > 6 else {
        missing(i, "expected read-only or read-write; write '\(usage)'")
        return nil
      }
      guard let p = permission(at: 6), expectEnd(i, after: 6, usage: usage) else { return nil }
      return .permission(share: s, account: a, p)
    default:
      let usage = "DEVICE remove ACCOUNT from SHARE"
      guard let a = accountName(at: 4, usage: usage), keyword("from", at: 5, usage: usage), let s = shareName(at: 6, usage: usage),
        expectEnd(i, after: 6, usage: usage)
      else { return nil }
      return .remove(share: s, account: a)
    }
  }

  /// Every share a statement names is made by a `share` line somewhere in the file, and every
  /// zone a `share … in ZONE` line names by a `create … in ZONE` line.
  mutating func checkShares() {
    for (i, token) in zoneUses where !zoneDeclarations.contains(token.text) {
      let known = zoneDeclarations.isEmpty ? "; a zone is made by a 'DEVICE create TYPE ID in ZONE' line" : ""
      error(i, token, "unknown zone '\(token.text)'" + didYouMean(token.text, zoneDeclarations, else: known))
    }
    for (i, token) in shareUses where !shareDeclarations.contains(token.text) {
      let known = shareDeclarations.isEmpty ? "; a share is made by a 'DEVICE share NAME' line" : ""
      error(i, token, "unknown share '\(token.text)'" + didYouMean(token.text, shareDeclarations, else: known))
    }
  }
}
