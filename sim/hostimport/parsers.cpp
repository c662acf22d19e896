// napisim import-host: parsers (see parsers.hpp).
#include "sim/hostimport/parsers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "sim/core/error.hpp"

namespace napisim::hostimport {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string_view> tokens_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
      ++i;
    const std::size_t b = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])))
      ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

bool to_int(std::string_view s, std::int64_t* v) {
  s = trim(s);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

std::string quoted(std::string_view s) {
  std::string q(s.substr(0, 80));
  return "\"" + q + (s.size() > 80 ? "...\"" : "\"");
}

// An ethtool "Key:<tabs>value" report: the values of the section after `section` (or of the
// whole text when `section` is empty), keys lowercased. `header` must start the text.
std::map<std::string, std::string> ethtool_section(std::string_view text, const std::string& file,
                                                   std::string_view header, std::string_view section,
                                                   const char* command) {
  const std::vector<std::string_view> lines = lines_of(text);
  std::size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty())
    ++i;
  if (i == lines.size() || trim(lines[i]).substr(0, header.size()) != header)
    throw ConfigError(file, std::string("expected the output of `") + command + "` starting \"" + std::string(header) +
                                " DEV:\", got " + (i == lines.size() ? "an empty file" : quoted(trim(lines[i]))));
  bool in = section.empty();
  std::map<std::string, std::string> kv;
  for (++i; i < lines.size(); ++i) {
    const std::string_view l = trim(lines[i]);
    if (l.empty()) continue;
    if (!section.empty() && l.back() == ':' && l.find(':') == l.size() - 1) {  // a section title
      in = l.substr(0, l.size() - 1) == section;
      continue;
    }
    if (!in) continue;
    const std::size_t colon = l.find(':');
    if (colon == std::string_view::npos)
      throw ConfigError(file, "line " + std::to_string(i + 1) + ": expected \"key: value\", got " + quoted(l));
    kv[lower(trim(l.substr(0, colon)))] = std::string(trim(l.substr(colon + 1)));
  }
  if (!section.empty() && kv.empty())
    throw ConfigError(
        file, std::string("expected a \"") + std::string(section) + ":\" section (the output of `" + command + "`)");
  return kv;
}

// A value of an ethtool report: an integer, "n/a" (nullopt) or absent (nullopt).
std::optional<std::int64_t> ethtool_int(const std::map<std::string, std::string>& kv, const std::string& key,
                                        const std::string& file) {
  const auto it = kv.find(key);
  if (it == kv.end() || it->second == "n/a") return std::nullopt;
  std::int64_t v = 0;
  if (!to_int(it->second, &v) || v < 0)
    throw ConfigError(file, "\"" + key + "\": expected an integer >= 0 or n/a, got " + quoted(it->second));
  return v;
}

}  // namespace

EthtoolChannels parse_ethtool_channels(std::string_view text, const std::string& file) {
  const auto kv = ethtool_section(text, file, "Channel parameters for", "Current hardware settings", "ethtool -l DEV");
  EthtoolChannels c;
  c.rx = ethtool_int(kv, "rx", file);
  c.tx = ethtool_int(kv, "tx", file);
  c.other = ethtool_int(kv, "other", file);
  c.combined = ethtool_int(kv, "combined", file);
  return c;
}

EthtoolRings parse_ethtool_rings(std::string_view text, const std::string& file) {
  const auto kv = ethtool_section(text, file, "Ring parameters for", "Current hardware settings", "ethtool -g DEV");
  EthtoolRings r;
  r.rx = ethtool_int(kv, "rx", file);
  r.tx = ethtool_int(kv, "tx", file);
  return r;
}

EthtoolCoalesce parse_ethtool_coalesce(std::string_view text, const std::string& file) {
  auto kv = ethtool_section(text, file, "Coalesce parameters for", "", "ethtool -c DEV");
  EthtoolCoalesce c;
  // "Adaptive RX: on  TX: off" is one line: its value is "on  TX: off".
  if (const auto it = kv.find("adaptive rx"); it != kv.end()) {
    const std::vector<std::string_view> t = tokens_of(it->second);
    const std::string v = t.empty() ? "" : lower(t[0]);
    if (v == "on")
      c.adaptive_rx = true;
    else if (v == "off")
      c.adaptive_rx = false;
    else if (v != "n/a")
      throw ConfigError(file, "\"Adaptive RX\": expected on, off or n/a, got " + quoted(it->second));
  }
  c.rx_usecs = ethtool_int(kv, "rx-usecs", file);
  c.rx_frames = ethtool_int(kv, "rx-frames", file);
  c.tx_usecs = ethtool_int(kv, "tx-usecs", file);
  c.tx_frames = ethtool_int(kv, "tx-frames", file);
  if (!c.adaptive_rx && !c.rx_usecs && !c.rx_frames && !kv.count("rx-usecs"))
    throw ConfigError(file, "expected \"Adaptive RX:\" and \"rx-usecs:\" lines (the output of `ethtool -c DEV`)");
  return c;
}

std::vector<IrqLine> parse_proc_interrupts(std::string_view text, const std::string& file, std::vector<int>* cpus) {
  const std::vector<std::string_view> lines = lines_of(text);
  if (lines.empty() || trim(lines[0]).substr(0, 3) != "CPU")
    throw ConfigError(file, "expected /proc/interrupts with a header line \"CPU0 CPU1 ...\", got " +
                                (lines.empty() ? std::string("an empty file") : quoted(trim(lines[0]))));
  std::vector<int> cols;
  for (std::string_view t : tokens_of(lines[0])) {
    std::int64_t n = -1;
    if (t.substr(0, 3) != "CPU" || !to_int(t.substr(3), &n) || n < 0 || n > 1 << 20)
      throw ConfigError(file, "line 1: expected CPU<n> column names, got " + quoted(t));
    cols.push_back(static_cast<int>(n));
  }
  std::vector<IrqLine> out;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string_view> t = tokens_of(lines[i]);
    if (t.empty()) continue;
    if (t[0].back() != ':')
      throw ConfigError(
          file, "line " + std::to_string(i + 1) + ": expected \"<irq>: <counts>...\", got " + quoted(trim(lines[i])));
    std::int64_t irq = -1;
    if (!to_int(t[0].substr(0, t[0].size() - 1), &irq)) continue;  // NMI:, LOC:, ERR:, ...
    IrqLine l;
    l.irq = irq;
    std::size_t k = 1;
    for (; k < t.size() && l.counts.size() < cols.size(); ++k) {
      std::int64_t c = 0;
      if (!to_int(t[k], &c) || c < 0) break;
      l.counts.push_back(static_cast<std::uint64_t>(c));
    }
    if (l.counts.size() != cols.size())
      throw ConfigError(file, "line " + std::to_string(i + 1) + ": expected " + std::to_string(cols.size()) +
                                  " per-CPU counts after \"" + std::string(t[0]) + "\", got " + quoted(trim(lines[i])));
    if (k < t.size()) l.name = std::string(t.back());
    out.push_back(std::move(l));
  }
  if (cpus) *cpus = cols;
  return out;
}

std::vector<int> parse_cpulist(std::string_view text, const std::string& file) {
  const std::string_view s = trim(text);
  std::vector<int> cpus;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t e = s.find(',', i);
    if (e == std::string_view::npos) e = s.size();
    const std::string_view g = s.substr(i, e - i);
    const std::size_t dash = g.find('-');
    std::int64_t a = -1, b = -1;
    const bool ok = dash == std::string_view::npos ? to_int(g, &a) && (b = a) >= 0
                                                   : to_int(g.substr(0, dash), &a) && to_int(g.substr(dash + 1), &b);
    if (!ok || a < 0 || b < a || b >= (1 << 20))
      throw ConfigError(file, "expected a cpu list like \"0-3,8\", got " + quoted(s));
    for (std::int64_t c = a; c <= b; ++c)
      cpus.push_back(static_cast<int>(c));
    i = e + 1;
  }
  if (cpus.empty()) throw ConfigError(file, "expected a cpu list like \"0-3,8\", got an empty file");
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> parse_cpumask_hex(std::string_view text, const std::string& file) {
  const std::string_view s = trim(text);
  std::vector<int> cpus;
  int bit = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    const char c = s[i];
    if (c == ',') continue;
    int v = 0;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v = c - 'A' + 10;
    else
      throw ConfigError(file, "expected a hex cpumask like \"00000000,000000ff\", got " + quoted(s));
    for (int b = 0; b < 4; ++b)
      if (v & (1 << b)) cpus.push_back(bit + b);
    bit += 4;
  }
  if (s.empty()) throw ConfigError(file, "expected a hex cpumask like \"00000000,000000ff\", got an empty file");
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

std::int64_t parse_int_file(std::string_view text, const std::string& file) {
  std::int64_t v = 0;
  if (!to_int(text, &v)) throw ConfigError(file, "expected an integer, got " + quoted(trim(text)));
  return v;
}

std::optional<int> rx_queue_of_irq(const std::string& name, const std::string& ifname, const std::string& bus_id) {
  const std::string n = lower(name);
  // The queue number: the last run of digits before any "@bus" suffix.
  const std::string head = n.substr(0, n.find('@'));
  std::size_t e = head.size();
  while (e > 0 && !std::isdigit(static_cast<unsigned char>(head[e - 1])))
    --e;
  std::size_t b = e;
  while (b > 0 && std::isdigit(static_cast<unsigned char>(head[b - 1])))
    --b;
  if (b == e || e - b > 6) return std::nullopt;
  const int q = std::stoi(head.substr(b, e - b));
  const std::string lif = lower(ifname), lbus = lower(bus_id);
  auto has_token = [&](const std::string& hay, const std::string& tok) {
    for (std::size_t p = hay.find(tok); p != std::string::npos; p = hay.find(tok, p + 1)) {
      const bool left = p == 0 || !std::isalnum(static_cast<unsigned char>(hay[p - 1]));
      const std::size_t r = p + tok.size();
      const bool right = r == hay.size() || !std::isalnum(static_cast<unsigned char>(hay[r]));
      if (left && right) return true;
    }
    return false;
  };
  const bool rx = head.find("rx") != std::string::npos || head.find("comp") != std::string::npos ||
                  head.find("input") != std::string::npos;
  const bool tx_only = !rx && (head.find("tx") != std::string::npos || head.find("output") != std::string::npos);
  if (tx_only) return std::nullopt;
  if (!lif.empty() && has_token(head, lif)) return q;
  if (!lbus.empty() && rx) {
    if (lbus.rfind("virtio", 0) == 0) {
      if (head.rfind(lbus + "-input.", 0) == 0) return q;
    } else if (n.find("@" + lbus) != std::string::npos || n.find("@pci:" + lbus) != std::string::npos) {
      return q;
    }
  }
  return std::nullopt;
}

std::map<std::string, std::string> parse_kconfig(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view l : lines_of(text)) {
    l = trim(l);
    if (l.substr(0, 7) != "CONFIG_") continue;
    const std::size_t eq = l.find('=');
    if (eq == std::string_view::npos) continue;
    out[std::string(l.substr(0, eq))] = std::string(l.substr(eq + 1));
  }
  return out;
}

}  // namespace napisim::hostimport
