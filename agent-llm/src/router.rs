//! A model per agent: requests go to the model and options routed for their agent
//! (`ChatRequest::agent`), or to the default.

use agent_contracts_runtime::model::BoxFuture;
use agent_contracts_runtime::{
    ChatModel, model::ChatRequest, model::ChatResponse, model::ModelError, model::ModelOptions,
    model::StreamSink,
};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Picks a model and options for each request by the agent that asks.
///
/// Routed options win over the request's own, field by field.
///
/// ```
/// use agent_contracts_runtime::{model::ModelOptions, ScriptedModel};
/// use agent_contracts_llm::Router;
/// use std::sync::Arc;
/// let cheap = Arc::new(ScriptedModel::default());
/// let strong = Arc::new(ScriptedModel::default());
/// let router = Router::new(cheap)
///     .route("plan_generator_agent", strong)
///     .options("discovery_agent", ModelOptions::default().with_temperature(0.0));
/// ```
#[derive(Clone)]
pub struct Router {
    default: Route,
    routes: BTreeMap<String, Route>,
}

#[derive(Clone)]
struct Route {
    model: Arc<dyn ChatModel>,
    options: ModelOptions,
}

impl Router {
    /// A router sending every agent to `default`.
    pub fn new(default: Arc<dyn ChatModel>) -> Self {
        Self {
            default: Route {
                model: default,
                options: ModelOptions::default(),
            },
            routes: BTreeMap::new(),
        }
    }

    /// Sends `agent`'s requests to `model`.
    pub fn route(self, agent: impl Into<String>, model: Arc<dyn ChatModel>) -> Self {
        self.route_with(agent, model, ModelOptions::default())
    }

    /// Sends `agent`'s requests to `model` with `options`.
    pub fn route_with(
        mut self,
        agent: impl Into<String>,
        model: Arc<dyn ChatModel>,
        options: ModelOptions,
    ) -> Self {
        self.routes.insert(agent.into(), Route { model, options });
        self
    }

    /// Gives `agent`'s requests `options`, on the model it is routed to (the default if none).
    pub fn options(mut self, agent: impl Into<String>, options: ModelOptions) -> Self {
        let agent = agent.into();
        let model = self.route_of(&agent).model.clone();
        self.routes.insert(agent, Route { model, options });
        self
    }

    fn route_of(&self, agent: &str) -> &Route {
        self.routes.get(agent).unwrap_or(&self.default)
    }
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("routes", &self.routes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ChatModel for Router {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let route = self.route_of(&request.agent);
        if route.options.is_empty() {
            return route.model.complete(request);
        }
        let request = request
            .clone()
            .with_options(route.options.or(&request.options));
        Box::pin(async move { route.model.complete(&request).await })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut dyn StreamSink,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let route = self.route_of(&request.agent);
        if route.options.is_empty() {
            return route.model.stream(request, sink);
        }
        let request = request
            .clone()
            .with_options(route.options.or(&request.options));
        Box::pin(async move { route.model.stream(&request, sink).await })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_contracts_runtime::{Message, ScriptedModel, model::ToolChoice};

    fn ask(agent: &str, options: ModelOptions) -> ChatRequest {
        ChatRequest::new(agent, vec![Message::user("hi")], Vec::new()).with_options(options)
    }

    #[tokio::test]
    async fn each_agent_gets_its_model_and_options() {
        let reply = |agent: &str| (agent.to_owned(), [Message::assistant("ok")]);
        let default = Arc::new(ScriptedModel::default().script(&reply("a").0, reply("a").1));
        let routed = Arc::new(
            ScriptedModel::default()
                .script(&reply("b").0, reply("b").1)
                .script(&reply("c").0, reply("c").1),
        );
        let cold = ModelOptions::default().with_temperature(0.0);
        let router = Router::new(default.clone())
            .route_with("b", routed.clone(), cold.clone())
            .route("c", routed.clone());
        let asked = ModelOptions::default()
            .with_temperature(1.0)
            .with_tool_choice(ToolChoice::Auto);
        for agent in ["a", "b", "c"] {
            let response = router.complete(&ask(agent, asked.clone())).await;
            assert_eq!(
                response.map(|r| r.message.content).ok().as_deref(),
                Some("ok")
            );
        }
        assert_eq!(default.requests_of("a")[0].options, asked);
        let b = &routed.requests_of("b")[0].options;
        assert_eq!(
            (b.temperature, &b.tool_choice),
            (Some(0.0), &Some(ToolChoice::Auto))
        );
        assert_eq!(routed.requests_of("c")[0].options, asked);
    }

    #[tokio::test]
    async fn options_alone_keep_the_default_model() {
        let model = Arc::new(ScriptedModel::default().script("a", [Message::assistant("ok")]));
        let options = ModelOptions::default().with_max_tokens(9);
        let router = Router::new(model.clone()).options("a", options);
        assert!(
            router
                .complete(&ask("a", ModelOptions::default()))
                .await
                .is_ok()
        );
        assert_eq!(model.requests_of("a")[0].options.max_tokens, Some(9));
    }
}
