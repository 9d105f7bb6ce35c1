#include "agent/sources.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include "agent/imex.h"

namespace gpufleet::agent {

std::unique_ptr<NodeSources> NodeSources::Open(const SourceOptions& o) {
  std::unique_ptr<NodeSources> s(new NodeSources());
  s->root_ = SysRoot(o.root);
  s->nvml_wanted_ = o.nvml;
  s->imex_config_ = o.imex_config;
  if (o.nvml) {
    auto nvml = sys::Nvml::Open();
    if (nvml) {
      s->nvml_ = std::move(*nvml);
      auto n = s->nvml_->DeviceCount();
      if (n) {
        s->monitor_ = std::make_unique<GpuMonitor>(s->nvml_.get(), *n, o.gpu_deadline);
      } else {
        s->nvml_note_ = n.error().message;
      }
    } else {
      s->nvml_note_ = nvml.error().message;
    }
  } else {
    s->nvml_note_ = "NVML switched off (--no-nvml)";
  }
  std::unique_ptr<sys::KmsgReader> kmsg;
  if (!o.kmsg.empty() && o.kmsg != "none") {
    auto k = sys::KmsgReader::Open(o.kmsg);
    if (k) {
      kmsg = std::move(*k);
    } else {
      s->kmsg_note_ = k.error().message;
    }
  }
  s->xids_ = std::make_unique<XidTracker>(s->monitor_ ? s->nvml_.get() : nullptr, std::move(kmsg));
  return s;
}

NodeSources::~NodeSources() {
  xids_.reset();
  const bool hung = monitor_ && monitor_->AnyHung();
  monitor_.reset();
  if (hung && nvml_) nvml_->Leak();  // a worker is still inside the library
}

std::vector<GpuReading> NodeSources::ReadGpus() {
  if (!monitor_) return {};
  std::vector<GpuReading> r = monitor_->Collect();
  std::vector<std::string> busids;
  for (const auto& g : r) busids.push_back(g.sample.busid);
  xids_->SetGpus(busids);
  return r;
}

void NodeSources::FillChecks(const std::vector<GpuReading>& gpus, const NodeSources& src,
                             std::vector<sys::XidEvent> xids, checks::CheckContext* ctx) {
  ctx->nvml = src.nvml() && src.monitor_ != nullptr;
  // NVML is expected where the spec says NVIDIA GPUs or, without a spec, where the PCI bus
  // shows NVIDIA GPUs (vendor 0x10de).
  bool nvidia = false;
  if (ctx->spec != nullptr) {
    nvidia = ctx->spec->cluster.nodes.gpu.vendor == "NVIDIA";
  } else if (ctx->node != nullptr) {
    for (const auto& g : ctx->node->gpus) {
      nvidia = nvidia || (g.pci >= 0 && static_cast<size_t>(g.pci) < ctx->node->pci.size() &&
                          ctx->node->pci[static_cast<size_t>(g.pci)].vendor == 0x10de);
    }
  }
  ctx->nvml_expected = src.nvml_wanted_ && nvidia;
  ctx->nvml_note = src.nvml_note_;
  ctx->kmsg_note = src.kmsg_note_;
  ctx->gpus.clear();
  bool fabric = false;
  for (const auto& g : gpus) {
    ctx->gpus.push_back(g.sample);
    // IMEX serves a multi-node NVLink domain: a GPU with a cluster UUID (an HGX board reports
    // its fabric "completed" with an all-zero one, and has no IMEX).
    fabric = fabric || (g.sample.has_fabric && !g.sample.fabric.cluster_uuid.empty());
  }
  ctx->xids = std::move(xids);
  // IMEX only matters to GPUs in a multi-node NVLink domain; peers get one second together.
  ctx->imex = {};
  if (fabric) ctx->imex = ReadImex(src.root_, src.imex_config_, std::chrono::milliseconds(1000));
}

Result<std::vector<checks::DiskUsage>> DiskUsageOf(const std::vector<std::string>& paths) {
  std::vector<checks::DiskUsage> out;
  for (const auto& path : paths) {
    struct statvfs st {};
    if (statvfs(path.c_str(), &st) != 0 || st.f_blocks == 0) {
      return InvalidArgument(fmt::format("--disk {}: cannot stat it", path));
    }
    out.push_back(
        {path, 1.0 - static_cast<double>(st.f_bavail) / static_cast<double>(st.f_blocks)});
  }
  return out;
}

}  // namespace gpufleet::agent
