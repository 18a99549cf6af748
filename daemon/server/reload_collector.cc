#include "daemon/server/reload_collector.h"

#include "daemon/exporter/families.h"

namespace rankwatch::server {

void ReloadCollector::Collect(
    std::vector<prometheus::MetricFamily>* out) const {
  prometheus::MetricFamily ok = exporter::MakeFamily(
      "rankwatch_config_last_reload_successful",
      "Whether the last configuration reload attempt was successful.",
      prometheus::MetricType::Gauge);
  exporter::AddGauge(&ok, {}, status_->last_successful ? 1 : 0);
  out->push_back(std::move(ok));

  prometheus::MetricFamily when = exporter::MakeFamily(
      "rankwatch_config_last_reload_success_timestamp_seconds",
      "Timestamp of the last successful configuration load or reload.",
      prometheus::MetricType::Gauge);
  exporter::AddGauge(&when, {},
                     exporter::TimestampSeconds(status_->last_success_ms));
  out->push_back(std::move(when));

  prometheus::MetricFamily total = exporter::MakeFamily(
      "rankwatch_config_reloads_total",
      "Configuration reload attempts (SIGHUP, POST /-/reload) by result.",
      prometheus::MetricType::Counter);
  exporter::AddCounter(&total, {{"result", "success"}},
                       static_cast<double>(status_->successes));
  exporter::AddCounter(&total, {{"result", "failure"}},
                       static_cast<double>(status_->failures));
  out->push_back(std::move(total));
}

}  // namespace rankwatch::server
