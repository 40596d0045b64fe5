import Replica
@_spi(Kernel) import Simulator

/// Header statements: `scenario about devices policy seed latency loss duplicate clock retention
/// autosync push deployed`.
/// The statement keywords, made once (they are looked up for every line).
enum ScenarioKeywords {
  static let header: Set<String> = [
    "scenario", "about", "devices", "policy", "seed", "latency", "loss", "duplicate", "clock", "retention", "autosync", "push",
    "deployed", "quota", "throttle", "zone", "limits", "account", "schema", "app-version", "references", "bandwidth", "engine",
  ]

  static let statements = [
    "scenario", "about", "devices", "policy", "seed", "latency", "loss", "duplicate", "clock", "retention", "autosync", "push",
    "deployed", "quota", "throttle", "zone", "limits", "account", "schema", "app-version", "references", "bandwidth", "engine", "type", "at",
    "settle",
    "expect",
  ]
}

extension ScenarioParsePart {
  static var headerKeywords: Set<String> { ScenarioKeywords.header }

  /// Every statement keyword, in the order the reference lists them (for suggestions).
  static var statementKeywords: [String] { ScenarioKeywords.statements }

  static var maxDevices: Int { 1000 }

  /// Words that cannot name a device: after `at TIME` they start a world event.
  static var worldEvents: [String] { ["sync", "offline", "online", "server", "settle", "free", "reject", "encrypted-data-reset"] }

  static func usage(_ keyword: String) -> String {
    switch keyword {
    case "scenario": "scenario NAME"
    case "about": "about \"text\""
    case "devices": "devices NAME..."
    case "policy": "policy PRESET [key=value ...]"
    case "seed": "seed N"
    case "latency": "latency D..D (or latency D)"
    case "loss": "loss P%"
    case "duplicate": "duplicate P%"
    case "clock": "clock DEVICE skew ±D [drift ±N ppm]"
    case "retention": "retention D"
    case "autosync": "autosync D|off"
    case "push": "push on|off|P%"
    case "deployed": "deployed TYPE..."
    case "quota": "quota SIZE [used SIZE]"
    case "throttle": "throttle [device N/D] [app N/D]"
    case "zone": "zone atomic|non-atomic"
    case "references": "references checked|unchecked"
    case "limits": "limits [N records] [SIZE]"
    case "account": "account NAME [DEVICE...]"
    case "schema": "schema from PATH"
    case "app-version": "app-version N DEVICE..."
    case "bandwidth": "bandwidth [DEVICE] RATE"
    case "engine": "engine send-first|fetch-first"
    default: keyword
    }
  }
}

extension ScenarioParsePart {
  func word(_ token: ScenarioToken) -> Result<String, _WordError> {
    token.isString
      ? .failure(_WordError(offset: token.start, message: "expected a word here, not a string"))
      : .success(token.text)
  }
}

extension DeclarationParser {
  mutating func parseHeader(_ i: Int, keyword: String) {
    let line = lines[i]
    if keyword != "clock" && keyword != "account" && keyword != "app-version" && keyword != "bandwidth" {
      if let prior = headerLines[keyword] {
        error(i, 0, "'\(keyword)' is already given on line \(prior); each header statement appears once")
        return
      }
      headerLines[keyword] = line.number
    }
    if let firstAt = firstAtLine, line.number > firstAt {
      error(i, 0, "'\(keyword)' belongs in the header, before the first 'at' line (line \(firstAt))")
    }
    let t = line.tokens
    let usage = Self.usage(keyword)
    // Statements that take exactly one word (or string) after the keyword.
    let single: ScenarioToken?
    switch keyword {
    case "devices", "policy", "clock", "deployed", "quota", "throttle", "limits", "account", "schema", "app-version", "bandwidth":
      single = nil
    default:
      guard t.count >= 2 else {
        missing(i, "expected a value after '\(keyword)'; write '\(usage)'")
        return
      }
      guard expectEnd(i, after: 1, usage: usage) else { return }
      single = t[1]
    }
    switch keyword {
    case "scenario": if let w = single { parseScenarioName(i, w) }
    case "about":
      guard let w = single, w.isString else {
        error(i, t[1], "the about text is a string; write 'about \"…\"'")
        return
      }
      about = w.text
    case "devices": parseDevices(i)
    case "schema": parseSchemaFrom(i)
    case "app-version": parseAppVersion(i)
    case "policy": parsePolicy(i)
    case "seed": if let w = single { parseSeed(i, w) }
    case "latency": if let w = single { parseLatency(i, w) }
    case "loss", "duplicate":
      guard let w = single else { return }
      guard w.isWord, let p = Self.percent(w.text) else {
        error(i, w, "expected a percentage from 0% to 100%, such as 1% or 0.5% (at most six decimals); write '\(usage)'")
        return
      }
      if keyword == "loss" { loss = p } else { duplicate = p }
    case "clock": parseClock(i)
    case "bandwidth": parseBandwidth(i)
    case "retention":
      guard let w = single, let d = value(i, word(w).flatMap { Self.duration($0, at: w.start) }) else { return }
      if d <= .zero { error(i, w, "retention must be longer than zero") } else { retention = d }
    case "autosync":
      guard let w = single else { return }
      if w.is("off") {
        autosync = nil
      } else if let d = value(i, word(w).flatMap { Self.duration($0, at: w.start) }) {
        autosync = d
      }
    case "push":
      guard let w = single else { return }
      if w.is("on") {
        push = .on
      } else if w.is("off") {
        push = .off
      } else if w.isWord, let p = Self.percent(w.text) {
        push = .lossy(p)
      } else {
        error(i, w, "expected on, off, or a delivery percentage such as 90%; write '\(usage)'")
      }
    case "deployed": parseDeployed(i)
    case "quota": parseQuota(i)
    case "throttle": parseThrottle(i)
    case "limits": parseLimits(i)
    case "account": parseAccount(i)
    case "references":
      guard let w = single else { return }
      if w.is("checked") {
        server.checksReferences = true
      } else if w.is("unchecked") {
        server.checksReferences = false
      } else {
        error(i, w, "expected checked or unchecked" + didYouMean(w.text, ["checked", "unchecked"], else: "; write '\(usage)'"))
      }
    case "zone":
      guard let w = single else { return }
      if w.is("atomic") {
        server.atomic = true
      } else if w.is("non-atomic") {
        server.atomic = false
      } else {
        error(i, w, "expected atomic or non-atomic" + didYouMean(w.text, ["atomic", "non-atomic"], else: "; write '\(usage)'"))
      }
    case "engine":
      guard let w = single else { return }
      if w.is("fetch-first") {
        server.engineFetchesFirst = true
      } else if w.is("send-first") {
        server.engineFetchesFirst = false
      } else {
        error(i, w, "expected send-first or fetch-first" + didYouMean(w.text, ["send-first", "fetch-first"], else: "; write '\(usage)'"))
      }
    default: break
    }
  }

  /// A size word at token `k` of line `i` (`250KB`), reported when bad.
  mutating func size(_ i: Int, _ k: Int) -> Int64? {
    let t = lines[i].tokens[k]
    guard t.isWord else {
      error(i, t, "expected a size such as 500B, 250KB, 2MB or 1.5GB, not a string")
      return nil
    }
    switch ByteCount.parse(t.text) {
    case .success(let n): return n
    case .failure(let e):
      error(i, t, e.message)
      return nil
    }
  }

  /// `account NAME [DEVICE...]`
  mutating func parseAccount(_ i: Int) {
    let t = lines[i].tokens
    guard t.count >= 2 else { return missing(i, "expected an account name after 'account'; write '\(Self.usage("account"))'") }
    guard checkName(i, t[1], "account name") else { return }
    if accountNames.contains(t[1].text) { return error(i, t[1], "account '\(t[1].text)' is declared twice") }
    var listed: [String] = []
    for token in t.dropFirst(2) {
      guard checkName(i, token, "device name") else { continue }
      pendingDeviceUses.append((token.text, i, token.start))
      if listed.contains(token.text) {
        error(i, token, "device '\(token.text)' is listed twice")
        continue
      }
      if let other = accountOfDevice[token.text] {
        error(i, token, "device '\(token.text)' is already signed into account '\(other)'")
        continue
      }
      listed.append(token.text)
    }
    accounts.append(AccountSetting(name: t[1].text, devices: listed, location: location(i, t[0])))
    accountNames.insert(t[1].text)
    for device in listed { accountOfDevice[device] = t[1].text }
  }

  /// `app-version N DEVICE...`: these devices start on app version N (the others on the latest).
  mutating func parseAppVersion(_ i: Int) {
    let t = lines[i].tokens
    let usage = Self.usage("app-version")
    guard t.count >= 3 else { return missing(i, "expected a version and the devices that run it; write '\(usage)', as in 'app-version 1 phone'") }
    guard t[1].isWord, let n = Int(t[1].text), (1...1000).contains(n) else {
      return error(i, t[1], "expected an app version from 1 to 1000 (the schema version it was built with)")
    }
    pendingVersions.append((n, i, t[1].start))
    var listed: [String] = []
    for token in t.dropFirst(2) {
      guard checkName(i, token, "device name") else { continue }
      pendingDeviceUses.append((token.text, i, token.start))
      if listed.contains(token.text) || appVersions.contains(where: { $0.devices.contains(token.text) }) {
        error(i, token, "device '\(token.text)' already has an app version")
        continue
      }
      listed.append(token.text)
    }
    appVersions.append(AppVersionSetting(version: n, devices: listed, location: location(i, t[0])))
  }

  /// `quota SIZE [used SIZE]`
  mutating func parseQuota(_ i: Int) {
    let t = lines[i].tokens
    let usage = Self.usage("quota")
    guard t.count >= 2 else { return missing(i, "expected the account's iCloud storage after 'quota'; write '\(usage)'") }
    guard let total = size(i, 1) else { return }
    var used: Int64 = 0
    if t.count > 2 {
      guard t[2].is("used") else {
        return error(i, t[2], "expected 'used SIZE' after the quota" + didYouMean(t[2].text, ["used"], else: "; write '\(usage)'"))
      }
      guard t.count > 3 else { return missing(i, "expected the size already used after 'used'; write '\(usage)'") }
      guard let u = size(i, 3), expectEnd(i, after: 3, usage: usage) else { return }
      guard u <= total else { return error(i, t[3], "the storage used (\(ByteCount.format(u))) is more than the quota (\(ByteCount.format(total)))") }
      used = u
    }
    server.quota = total
    server.usedByOthers = used
  }

  /// `throttle [device N/D] [app N/D]`
  mutating func parseThrottle(_ i: Int) {
    let t = lines[i].tokens
    let usage = Self.usage("throttle")
    guard t.count >= 2 else {
      return missing(i, "expected a request budget after 'throttle'; write '\(usage)', as in 'throttle device 10/1m app 100/1m'")
    }
    var throttle = Throttle()
    var k = 1
    while k < t.count {
      let scope = t[k]
      guard scope.is("device") || scope.is("app") else {
        return error(i, scope, "expected 'device' or 'app'" + didYouMean(scope.text, ["device", "app"], else: "; write '\(usage)'"))
      }
      if (scope.is("device") && throttle.perDevice != nil) || (scope.is("app") && throttle.app != nil) {
        return error(i, scope, "'\(scope.text)' is given twice")
      }
      guard k + 1 < t.count else { return missing(i, "expected a budget such as 10/1m after '\(scope.text)'") }
      guard let budget = requestBudget(i, k + 1) else { return }
      if scope.is("device") { throttle.perDevice = budget } else { throttle.app = budget }
      k += 2
    }
    server.throttle = throttle
  }

  /// `10/1m`: requests per window.
  mutating func requestBudget(_ i: Int, _ k: Int) -> RequestBudget? {
    let token = lines[i].tokens[k]
    let parts = token.text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard token.isWord, parts.count == 2, let n = Int(parts[0]), n >= 1, n <= 1_000_000 else {
      error(i, token, "expected a request budget such as 10/1m (1 to 1000000 requests per window), found \(Self.shown(token))")
      return nil
    }
    guard
      let window = value(
        i, Self.boundedDuration(String(parts[1]), at: token.start + parts[0].unicodeScalars.count + 1, allowSign: false, what: "window"))
    else { return nil }
    guard window > .zero else {
      error(i, token, "a throttling window must be longer than zero")
      return nil
    }
    return RequestBudget(requests: n, window: window)
  }

  /// `limits [N records] [SIZE]`
  mutating func parseLimits(_ i: Int) {
    let t = lines[i].tokens
    let usage = Self.usage("limits")
    guard t.count >= 2 else { return missing(i, "expected a limit after 'limits'; write '\(usage)', as in 'limits 400 records 2MB'") }
    var k = 1
    var sawRecords = false
    var sawBytes = false
    while k < t.count {
      if k + 1 < t.count, t[k + 1].is("records") {
        guard !sawRecords else { return error(i, t[k], "the record limit is given twice") }
        guard t[k].isWord, let n = Int(t[k].text), n >= 1, n <= 10_000 else {
          return error(i, t[k], "expected a whole number of records from 1 to 10000, found \(Self.shown(t[k]))")
        }
        server.maxRecordsPerRequest = n
        sawRecords = true
        k += 2
      } else {
        guard !sawBytes else { return error(i, t[k], "the size limit is given twice; write '\(usage)'") }
        guard let n = size(i, k) else { return }
        guard n >= 1 else { return error(i, t[k], "a request size limit must be at least 1B") }
        server.maxBytesPerRequest = n
        sawBytes = true
        k += 1
      }
    }
  }

  /// The text of a word token; a string token is an error.

  mutating func parseScenarioName(_ i: Int, _ w: ScenarioToken) {
    if w.isString {
      name = w.text
    } else if Self.isIdentifier(w.text) {
      name = w.text
    } else {
      error(i, w, "'\(Self.quoted(w.text))' is not a valid scenario name: use letters, digits, '_' and '-' starting with a letter, or a \"string\"")
    }
  }

  mutating func parseDevices(_ i: Int) {
    let t = lines[i].tokens
    guard t.count >= 2 else {
      missing(i, "expected at least one device name; write 'devices NAME...', as in 'devices iPad phone'")
      return
    }
    for token in t.dropFirst() where token.isWord && !Self.worldEvents.contains(token.text) { knownDevices.insert(token.text) }
    var listed: Set<String> = []
    for token in t.dropFirst() {
      guard checkName(i, token, "device name") else { continue }
      if Self.worldEvents.contains(token.text) {
        error(i, token, "'\(token.text)' cannot name a device: after 'at TIME' it starts a world event")
      } else if !listed.insert(token.text).inserted {
        error(i, token, "device '\(token.text)' is listed twice")
      } else if devices.count >= Self.maxDevices {
        error(i, token, "too many devices: at most \(Self.maxDevices)")
        return
      } else {
        devices.append(token.text)
      }
    }
  }

  mutating func parsePolicy(_ i: Int) {
    let line = lines[i]
    let t = line.tokens
    policyLocation = SourceLocation(line: line.number, column: line.column(t[0].start))
    if let s = t.dropFirst().first(where: \.isString) {
      error(i, s, "a policy is written without quotes; write '\(Self.usage("policy"))'")
      return
    }
    let start = t.count > 1 ? t[1].start : line.endOfContent
    let end = t.count > 1 ? t[t.count - 1].end : start
    guard end - start <= 1_000 else {
      error(i, start, "policy spec is too long (at most 1000 characters)")
      return
    }
    let text = line.slice(start, end)
    switch PolicySpec.parse(text) {
    case .success(let spec):
      policy = spec
    case .failure(let e):
      // `offset` counts Characters of `text`; turn it into a scalar offset in the line.
      var scalars = 0
      var characters = 0
      for ch in text {
        if characters >= e.offset { break }
        scalars += ch.unicodeScalars.count
        characters += 1
      }
      error(i, start + scalars, Self.exactDurationLimit(e.message))
    }
  }

  mutating func parseSeed(_ i: Int, _ w: ScenarioToken) {
    guard w.isWord, !w.text.isEmpty, w.text.unicodeScalars.allSatisfy(Self.isDigit), let n = UInt64(w.text) else {
      error(i, w, "the seed is a whole number from 0 to \(UInt64.max); found \(Self.shown(w))")
      return
    }
    seed = n
  }

  mutating func parseLatency(_ i: Int, _ w: ScenarioToken) {
    guard let text = value(i, word(w)) else { return }
    let scalars = Array(text.unicodeScalars)
    var dots: Int?
    if scalars.count >= 2 {
      for k in 0..<(scalars.count - 1) where scalars[k] == "." && scalars[k + 1] == "." {
        dots = k
        break
      }
    }
    guard let dots else {
      if let d = value(i, Self.duration(text, at: w.start)) { latency = .fixed(d) }
      return
    }
    let lowText = String(String.UnicodeScalarView(scalars[..<dots]))
    let highText = String(String.UnicodeScalarView(scalars[(dots + 2)...]))
    let low = value(i, Self.duration(lowText, at: w.start))
    let high = value(i, Self.duration(highText, at: w.start + dots + 2))
    guard let low, let high else { return }
    if low > high {
      error(i, w, "latency range \(Self.quoted(text)) is backwards: write the low end first, as in \(high)..\(low)")
      return
    }
    latency = .uniform(low, high)
  }

  /// `bandwidth RATE` (every device's link) or `bandwidth DEVICE RATE` (one device's link, both
  /// ways): at most one line for the world and one per device.
  mutating func parseBandwidth(_ i: Int) {
    let t = lines[i].tokens
    let usage = Self.usage("bandwidth")
    guard t.count >= 2 else { return missing(i, "expected a rate such as 2Mbps after 'bandwidth'; write '\(usage)'") }
    var device: String?
    var k = 1
    if t.count >= 3 {
      guard checkName(i, t[1], "device name") else { return }
      pendingDeviceUses.append((t[1].text, i, t[1].start))
      device = t[1].text
      k = 2
    }
    let key = device ?? ""
    if let prior = bandwidthLines[key] {
      let what = device.map { "the bandwidth of '\($0)'" } ?? "the world's bandwidth"
      return error(i, t[1], "\(what) is already set on line \(prior)")
    }
    bandwidthLines[key] = lines[i].number
    guard expectEnd(i, after: k, usage: usage), let text = value(i, word(t[k])) else { return }
    switch BandwidthSetting.parseRate(text) {
    case .failure(let e): error(i, t[k], e.message)
    case .success(let bps): bandwidth.append(BandwidthSetting(device: device, bitsPerSecond: bps))
    }
  }

  mutating func parseClock(_ i: Int) {
    let t = lines[i].tokens
    let usage = Self.usage("clock")
    guard t.count >= 2 else { return missing(i, "expected a device after 'clock'; write '\(usage)'") }
    let device = t[1]
    guard checkName(i, device, "device name") else { return }
    pendingDeviceUses.append((device.text, i, device.start))
    if let prior = clockLines[device.text] {
      error(i, device, "the clock of '\(device.text)' is already set on line \(prior)")
      return
    }
    clockLines[device.text] = lines[i].number
    guard t.count >= 3 else { return missing(i, "expected 'skew ±D' after the device; write '\(usage)'") }
    guard t[2].is("skew") else {
      return error(i, t[2], "expected 'skew' after the device, found \(Self.shown(t[2])); write '\(usage)'")
    }
    guard t.count >= 4 else { return missing(i, "expected the skew, as in 'skew +2s' or 'skew -500ms'") }
    guard let skewText = value(i, word(t[3])),
      let skew = value(i, Self.boundedDuration(skewText, at: t[3].start, allowSign: true, what: "clock skew"))
    else { return }
    var drift: Int64 = 0
    if t.count > 4 {
      guard t[4].is("drift") else {
        return error(i, t[4], "unexpected \(Self.shown(t[4]))" + didYouMean(t[4].text, ["drift"], else: "; write '\(usage)'"))
      }
      guard t.count >= 6 else { return missing(i, "expected the drift, as in 'drift 40ppm' or 'drift -40ppm'") }
      guard let (ppm, last) = parseDrift(i, from: 5) else { return }
      guard expectEnd(i, after: last, usage: usage) else { return }
      drift = ppm
    }
    clocks.append(ClockSetting(device: device.text, skew: skew, driftPPM: drift, location: location(i, t[0])))
  }

  /// `+40ppm`, `40 ppm`, `-40ppm`: the drift and the index of its last token.
  mutating func parseDrift(_ i: Int, from k: Int) -> (Int64, Int)? {
    let t = lines[i].tokens
    guard let text = value(i, word(t[k])) else { return nil }
    var number = text
    var last = k
    if number.hasSuffix("ppm") {
      number = String(number.dropLast(3))
    } else if k + 1 < t.count, t[k + 1].is("ppm") {
      last = k + 1
    } else {
      error(i, t[k], "write the drift in ppm, as in 'drift \(Self.quoted(text))ppm'")
      return nil
    }
    var digits = Substring(number)
    var negative = false
    if let sign = digits.first, sign == "+" || sign == "-" {
      negative = sign == "-"
      digits = digits.dropFirst()
    }
    let range = "the drift is a whole number of ppm from -1000000 to +1000000"
    guard !digits.isEmpty, digits.unicodeScalars.allSatisfy(Self.isDigit) else {
      error(i, t[k], "\(range); found '\(Self.quoted(text))'")
      return nil
    }
    // Leading zeros do not count: `+00000040ppm` is 40 ppm.
    guard digits.drop(while: { $0 == "0" }).count <= 7, let magnitude = Int64(digits), magnitude <= 1_000_000 else {
      error(i, t[k], "\(range); '\(Self.quoted(text))' is out of range")
      return nil
    }
    return (negative ? -magnitude : magnitude, last)
  }

  mutating func parseDeployed(_ i: Int) {
    var seen: [String] = []
    var listed: Set<String> = []
    for token in lines[i].tokens.dropFirst() {
      guard checkName(i, token, "type name") else { continue }
      guard listed.insert(token.text).inserted else {
        error(i, token, "type '\(token.text)' is listed twice")
        continue
      }
      seen.append(token.text)
      pendingTypeUses.append((token.text, i, token.start))
    }
    deployed = seen
    deployedLine = lines[i].number
  }
}
