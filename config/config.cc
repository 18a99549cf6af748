#include "config/config.h"

namespace rankwatch::config {

std::string_view JoinModeName(JoinMode m) {
  switch (m) {
    case JoinMode::kImpression:
      return "impression";
    case JoinMode::kQrels:
      return "qrels";
  }
  return "?";
}

std::string_view CombineRuleName(CombineRule r) {
  switch (r) {
    case CombineRule::kMax:
      return "max";
    case CombineRule::kLast:
      return "last";
  }
  return "?";
}

}  // namespace rankwatch::config
