#include "tests/testing/prometheus_text.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace rankwatch::testing {

namespace {

bool Matches(const Sample& s, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  if (s.name != name) return false;
  for (const auto& [k, v] : labels) {
    auto it = s.labels.find(k);
    if (it == s.labels.end() || it->second != v) return false;
  }
  return true;
}

// Parses `{a="x",b="y"}` starting at text[i] == '{'; returns the index
// after '}'.
size_t ParseLabels(const std::string& text, size_t i,
                   std::map<std::string, std::string>* labels) {
  ++i;
  while (i < text.size() && text[i] != '}') {
    const size_t eq = text.find('=', i);
    const std::string key = text.substr(i, eq - i);
    i = eq + 2;  // Skip '="'.
    std::string value;
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\' && i + 1 < text.size()) {
        ++i;
        value += text[i] == 'n' ? '\n' : text[i];
      } else {
        value += text[i];
      }
      ++i;
    }
    (*labels)[key] = value;
    ++i;  // Closing quote.
    if (i < text.size() && text[i] == ',') ++i;
  }
  return i + 1;
}

}  // namespace

Scrape Scrape::Parse(const std::string& text) {
  Scrape scrape;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    size_t i = line.find_first_of("{ ");
    s.name = line.substr(0, i);
    if (i != std::string::npos && line[i] == '{') {
      i = ParseLabels(line, i, &s.labels);
    }
    const std::string value = line.substr(line.find_first_not_of(' ', i));
    s.value = std::strtod(value.c_str(), nullptr);
    scrape.samples_.push_back(std::move(s));
  }
  return scrape;
}

double Scrape::Sum(const std::string& name,
                   const std::map<std::string, std::string>& labels) const {
  double sum = 0;
  for (const Sample& s : samples_) {
    if (Matches(s, name, labels)) sum += s.value;
  }
  return sum;
}

bool Scrape::Has(const std::string& name,
                 const std::map<std::string, std::string>& labels) const {
  return std::any_of(samples_.begin(), samples_.end(),
                     [&](const Sample& s) { return Matches(s, name, labels); });
}

std::vector<std::string> Scrape::LabelValues(const std::string& name,
                                             const std::string& label) const {
  std::vector<std::string> values;
  for (const Sample& s : samples_) {
    auto it = s.labels.find(label);
    if (s.name == name && it != s.labels.end()) values.push_back(it->second);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace rankwatch::testing
