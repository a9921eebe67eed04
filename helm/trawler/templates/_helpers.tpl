{{/*
Shared snippets. Keep to the functions internal/composecheck's renderer
implements (include, toYaml, nindent, indent, quote, default, contains, trunc,
trimSuffix, required, sha256sum, printf, .Files.Get): the chart is tested by
rendering it there, and with the real helm (internal/composecheck).
*/}}

{{/* Base name of every object: the release name, plus the chart name unless the release already contains it. */}}
{{- define "trawler.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
Base of every object name. Kubernetes limits names to 63 characters and a
CronJob's to 52 (its Jobs get an 11-character suffix); the longest
suffixes are "-launcher-<stream>" with a 12-character stream name
(values.schema.json) and "-cdxwriter-headless". So a full name over 30
characters, which any release name over 21 characters gives, is cut to 21
and followed by 8 characters of its hash, keeping two long release names
apart. Short names are unchanged.
*/}}
{{- define "trawler.base" -}}
{{- $full := include "trawler.fullname" . -}}
{{- if gt (len $full) 30 -}}
{{- printf "%s-%s" ($full | trunc 21 | trimSuffix "-") ($full | sha256sum | trunc 8) -}}
{{- else -}}
{{- $full -}}
{{- end -}}
{{- end -}}

{{/* Labels that select a role's pods. Never change them on upgrade: selectors are immutable. */}}
{{- define "trawler.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "trawler.labels" -}}
{{ include "trawler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | trunc 63 | trimSuffix "-" }}
trawler.crawl: {{ .Values.crawl | quote }}
{{- end -}}

{{- define "trawler.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* Prometheus discovers pods by these annotations (no ServiceMonitor CRD needed). */}}
{{- define "trawler.scrapeAnnotations" -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.adminPort | quote }}
prometheus.io/path: /metrics
{{- end -}}

{{/* Environment every role shares. The Redis password comes from a Secret, never from values. */}}
{{- define "trawler.env" -}}
- name: TRAWLER_KAFKA
  value: {{ required "kafka.brokers is required" .Values.kafka.brokers | quote }}
- name: TRAWLER_REDIS
  value: {{ required "redis.addr is required" .Values.redis.addr | quote }}
{{- if .Values.redis.existingSecret }}
- name: TRAWLER_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.existingSecretKey }}
{{- end }}
- name: TRAWLER_CRAWL
  value: {{ .Values.crawl | quote }}
- name: TRAWLER_ADMIN_ADDR
  value: {{ printf ":%v" .Values.adminPort | quote }}
- name: TRAWLER_DATA
  value: /data
- name: TRAWLER_LOG_FORMAT
  value: {{ .Values.logFormat | quote }}
- name: TMPDIR
  value: /tmp
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Liveness on /healthz (restart a wedged process), readiness on /readyz (dependencies reachable). */}}
{{- define "trawler.probes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: admin
  initialDelaySeconds: 10
  periodSeconds: 15
  failureThreshold: 4
readinessProbe:
  httpGet:
    path: /readyz
    port: admin
  periodSeconds: 10
  failureThreshold: 3
{{- end -}}

{{/* Scheduling constraints shared by every pod. */}}
{{- define "trawler.scheduling" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
A stream's crawl profile text; called with (list $ $stream). The stream's
own profile (streams[].profile) or the shipped one of the crawl.
*/}}
{{- define "trawler.profileText" -}}
{{- $root := index . 0 -}}
{{- $stream := index . 1 -}}
{{- if index $stream "profile" -}}
{{- index $stream "profile" -}}
{{- else if eq $root.Values.crawl "dc" -}}
{{- $root.Files.Get "profiles/domain.yaml" -}}
{{- else -}}
{{- $root.Files.Get "profiles/frequent.yaml" -}}
{{- end -}}
{{- end -}}

{{/*
The admin token: env, volume mount and volume of the roles that serve the
admin API or CDX writes (nothing when adminToken.existingSecret is empty),
with the read-only token when adminToken.readOnlyKey names one. The roles
re-read the files when the Secret changes.
*/}}
{{- define "trawler.adminTokenEnv" -}}
{{- if .Values.adminToken.existingSecret }}
- name: TRAWLER_ADMIN_TOKEN_FILE
  value: /etc/trawler-admin/{{ .Values.adminToken.key }}
{{- if .Values.adminToken.readOnlyKey }}
- name: TRAWLER_ADMIN_READONLY_TOKEN_FILE
  value: /etc/trawler-admin/{{ .Values.adminToken.readOnlyKey }}
{{- end }}
{{- end }}
{{- end -}}

{{- define "trawler.adminTokenMount" -}}
{{- if .Values.adminToken.existingSecret }}
- name: admin-token
  mountPath: /etc/trawler-admin
  readOnly: true
{{- end }}
{{- end -}}

{{- define "trawler.adminTokenVolume" -}}
{{- if .Values.adminToken.existingSecret }}
- name: admin-token
  secret:
    secretName: {{ .Values.adminToken.existingSecret }}
    items:
      - key: {{ .Values.adminToken.key }}
        path: {{ .Values.adminToken.key }}
      {{- if .Values.adminToken.readOnlyKey }}
      - key: {{ .Values.adminToken.readOnlyKey }}
        path: {{ .Values.adminToken.readOnlyKey }}
      {{- end }}
{{- end }}
{{- end -}}

{{/*
The claim holding the workers' WARCs and crawl logs (shared with the
renderers and the provenance role): worker.persistence.existingClaim, else
the one the chart creates (warcs-pvc.yaml); "" with
worker.persistence.emptyDir.
*/}}
{{- define "trawler.warcsClaim" -}}
{{- if .Values.worker.persistence.existingClaim -}}
{{- .Values.worker.persistence.existingClaim -}}
{{- else if not .Values.worker.persistence.emptyDir -}}
{{- include "trawler.base" . }}-warcs
{{- end -}}
{{- end -}}

{{/*
Whether the provenance role runs: provenance.enabled true or false, or
"auto" (the default): on for the domain crawl (crawl: dc, whose shipped
profile streams its provenance, docs/provenance.md) when its workers have
the shared claim the role needs, off for the frequent crawl. Non-empty
means on.
*/}}
{{- define "trawler.provenanceOn" -}}
{{- $e := .Values.provenance.enabled -}}
{{- if eq (printf "%v" $e) "auto" -}}
{{- if and (eq .Values.crawl "dc") (include "trawler.warcsClaim" .) -}}true{{- end -}}
{{- else if $e -}}true
{{- end -}}
{{- end -}}

{{/* The data volume of workers and renderers: the WARCs claim, or an emptyDir. */}}
{{- define "trawler.dataVolume" -}}
{{- $claim := include "trawler.warcsClaim" . -}}
- name: data
{{- if $claim }}
  persistentVolumeClaim:
    claimName: {{ $claim }}
{{- else }}
  emptyDir:
    sizeLimit: {{ .Values.worker.persistence.emptyDirSizeLimit }}
{{- end }}
{{- end -}}

{{/*
TRAWLER_CLAMD_ADDR of a role; called with (list $ ADDRESS), ADDRESS the
role's own setting ("" for worker.clamdAddr). worker.clamdAddr is required:
the chart deploys no ClamAV. "none": no variable, no scanning.
*/}}
{{- define "trawler.clamdEnv" -}}
{{- $root := index . 0 -}}
{{- $addr := index . 1 | default (required "worker.clamdAddr is required: the clamd (host:port) the workers stream every capture to, e.g. --set worker.clamdAddr=clamav.antivirus:3310; the chart does not deploy ClamAV (run the clamav/clamav image beside it: helm/trawler/README.md). worker.clamdAddr=none crawls without virus scanning" $root.Values.worker.clamdAddr) -}}
{{- if ne $addr "none" }}
- name: TRAWLER_CLAMD_ADDR
  value: {{ $addr | quote }}
{{- end }}
{{- end -}}
