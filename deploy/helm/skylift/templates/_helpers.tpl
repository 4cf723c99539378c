{{/* The release's full name, at most 63 characters. */}}
{{- define "skylift.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "skylift.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Labels that select the operator's pods. */}}
{{- define "skylift.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "skylift.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "skylift.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* teamPolicySelector as a label selector string (k=v,…, keys sorted) for --team-policy-selector. */}}
{{- define "skylift.teamPolicySelector" -}}
{{- $pairs := list -}}
{{- range $k, $v := .Values.teamPolicySelector -}}
{{- $pairs = append $pairs (printf "%s=%v" $k $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{- define "skylift.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
RBAC rules on every kind the operator serves, one per API group, from files/kinds.yaml (generated
from src/kinds/registry.ts by make generate: no template names a kind). Called with a dict: "root"
(the chart's context), "verbs" (as written in a rule, e.g. "get, patch") and optionally
"subresource" (e.g. "/status": the rule is on that subresource of each kind instead).
*/}}
{{- define "skylift.kindRules" -}}
{{- $suffix := default "" .subresource -}}
{{- range $group := .root.Files.Get "files/kinds.yaml" | fromYamlArray -}}
{{- $resources := list -}}
{{- range $group.resources -}}
{{- $resources = append $resources (printf "%s%s" . $suffix) -}}
{{- end -}}
- apiGroups: [{{ $group.apiGroup }}]
  resources: [{{ join ", " $resources }}]
  verbs: [{{ $.verbs }}]
{{ end -}}
{{- end -}}

{{/*
The operator's rights on the cluster-scoped kinds (files/kinds.yaml clusterResources) and their
status: in a ClusterRole always, since the Roles of watchNamespaces
cannot grant a cluster-scoped resource. Called with the chart's context.
*/}}
{{/*
Creating and deleting the cluster-scoped kinds' objects: the Gateway API front end makes and
removes the cluster-scoped object that is each Gateway's load balancer.
*/}}
{{- define "skylift.clusterKindMakeRules" -}}
{{- range $group := .Files.Get "files/kinds.yaml" | fromYamlArray -}}
{{- if $group.clusterResources -}}
- apiGroups: [{{ $group.apiGroup }}]
  resources: [{{ join ", " $group.clusterResources }}]
  verbs: [create, delete]
{{ end -}}
{{- end -}}
{{- end -}}

{{- /* What the Gateway API front end makes in a Gateway's namespace (the records of its route hostnames). */}}
{{- define "skylift.gatewayKindMakeRules" -}}
{{- range $group := .Files.Get "files/kinds.yaml" | fromYamlArray -}}
{{- if $group.gatewayResources -}}
- apiGroups: [{{ $group.apiGroup }}]
  resources: [{{ join ", " $group.gatewayResources }}]
  verbs: [create, patch, delete]
{{ end -}}
{{- end -}}
{{- end -}}

{{- define "skylift.clusterKindRules" -}}
{{- range $group := .Files.Get "files/kinds.yaml" | fromYamlArray -}}
{{- if $group.clusterResources -}}
{{- $status := list -}}
{{- range $group.clusterResources -}}
{{- $status = append $status (printf "%s/status" .) -}}
{{- end -}}
- apiGroups: [{{ $group.apiGroup }}]
  resources: [{{ join ", " $group.clusterResources }}]
  verbs: [get, list, watch, patch]
- apiGroups: [{{ $group.apiGroup }}]
  resources: [{{ join ", " $status }}]
  verbs: [get, patch]
{{ end -}}
{{- end -}}
{{- end -}}

{{/*
The operator's rights on the objects it manages, in every watched namespace.
Least privilege: no wildcards; Secrets only get/create/patch (connection Secrets
are written with server-side apply and never listed or watched).
*/}}
{{- define "skylift.managedRules" -}}
{{ include "skylift.kindRules" (dict "root" . "verbs" "get, list, watch, patch") -}}
{{ include "skylift.kindRules" (dict "root" . "verbs" "get, patch" "subresource" "/status") -}}
- apiGroups: ['']
  resources: [services]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
{{- /* Pods carrying the target-health readiness gate (the operator watches only those, by label) and their gate's condition. */}}
- apiGroups: ['']
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: ['']
  resources: [pods/status]
  verbs: [patch]
- apiGroups: ['']
  resources: [secrets]
  verbs: [get, create, patch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}
