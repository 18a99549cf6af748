// Reading Prometheus text exposition in tests: samples with their labels,
// and sums over samples matching a name and label subset.
#ifndef RANKWATCH_TESTS_TESTING_PROMETHEUS_TEXT_H_
#define RANKWATCH_TESTS_TESTING_PROMETHEUS_TEXT_H_

#include <map>
#include <string>
#include <vector>

namespace rankwatch::testing {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

class Scrape {
 public:
  // Parses the text format (comments skipped; label values unescaped).
  static Scrape Parse(const std::string& text);

  const std::vector<Sample>& samples() const { return samples_; }
  // Sum of the samples named `name` whose labels include `labels`.
  double Sum(const std::string& name,
             const std::map<std::string, std::string>& labels = {}) const;
  // Whether any sample matches.
  bool Has(const std::string& name,
           const std::map<std::string, std::string>& labels = {}) const;
  // The values of label `label` over samples named `name`.
  std::vector<std::string> LabelValues(const std::string& name,
                                       const std::string& label) const;

 private:
  std::vector<Sample> samples_;
};

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_PROMETHEUS_TEXT_H_
